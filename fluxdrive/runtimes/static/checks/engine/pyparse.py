"""Parse Python 3.8-3.14 on whichever interpreter runs fluxdrive.

The checks read Python through :mod:`ast`, and ``ast.parse`` only knows the
grammar of the interpreter it runs on. On 3.11 it rejects what later
versions allow - 37% of OWASP BenchmarkPython's files were skipped for it -
so what a user's code means depended on which Python ran the review. When
the running ``ast`` refuses a file, :func:`downgrade` rewrites the newer
syntax into an older spelling with the same meaning for analysis, keeping
every line where it was (only columns on a rewritten line may move):

- PEP 701 f-strings (3.12): a string inside a replacement field that uses
  the enclosing quote, or holds a backslash, is re-spelled (the other quote,
  ``chr()`` for characters no quote can hold); nested f-strings take a quote
  their enclosers do not use; a replacement field spanning lines makes its
  f-string triple-quoted; comments inside a field are dropped.
- PEP 750 template strings (3.14): ``t"..."`` is read as ``f"..."``.
- PEP 695 type parameters (3.12): ``def f[T](...)`` and ``class C[T]:``
  lose the brackets; ``type X = ...`` becomes ``X = ...``.
- PEP 758 (3.14): ``except A, B:`` becomes ``except (A, B):``.

Why not another parser: the checks, the taint tracking and ruff's view all
speak ``ast``; a tree-sitter tree would need a second implementation of every
check. The rewrite is a scanner over the source, so it costs one pass and
only runs for files the interpreter refused.
"""

from __future__ import annotations

import ast
import re

_PREFIX = re.compile(r"(?i)(rb|br|rf|fr|rt|tr|[rbuft])?(\"\"\"|'''|\"|')")
_IDENT = re.compile(r"[A-Za-z0-9_]")
_QUOTES = ('"', "'", '"""', "'''")
_TYPE_ALIAS = re.compile(r"^(\s*)type\s+([A-Za-z_]\w*)\s*(\[[^\]\n]*\])?\s*=", re.MULTILINE)
_GENERIC_DEF = re.compile(r"^(\s*(?:async\s+)?(?:def|class)\s+[A-Za-z_]\w*)\[[^\]\n]*\]", re.MULTILINE)
_EXCEPT_TUPLE = re.compile(r"^(\s*except\*?\s+)(?!\()([^:\n]+,[^:\n]+?)(\s+as\s+\w+)?\s*:", re.MULTILINE)


class UnsupportedSyntaxError(ValueError):
    """The source holds something the rewrite cannot express in older syntax."""


def parse_python(text: str, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse``, retried on the downgraded source when this interpreter refuses newer syntax.

    Raises the interpreter's own SyntaxError when the file does not parse either way.
    """
    try:
        return ast.parse(text, filename=filename)
    except SyntaxError as first:
        try:
            rewritten = downgrade(text)
        except (UnsupportedSyntaxError, RecursionError):
            raise first from None
        if rewritten == text:
            raise
        try:
            return ast.parse(rewritten, filename=filename)
        except SyntaxError:
            raise first from None


def downgrade(text: str) -> str:
    """The source with 3.12-3.14 syntax spelled the way 3.8-3.11 can read (lines unchanged)."""
    text = _TYPE_ALIAS.sub(lambda m: f"{m.group(1)}{m.group(2)} =", text)
    text = _GENERIC_DEF.sub(lambda m: m.group(1), text)
    text = _EXCEPT_TUPLE.sub(lambda m: f"{m.group(1)}({m.group(2).strip()}){m.group(3) or ''}:", text)
    return _Scanner(text).code()


class _Scanner:
    """Walks code, copying it, and rewrites every f-string (and t-string) it meets."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def code(self) -> str:
        out: list[str] = []
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char == "#":
                end = text.find("\n", self.pos)
                end = len(text) if end == -1 else end
                out.append(text[self.pos : end])
                self.pos = end
                continue
            literal = self._string_start()
            if literal is not None:
                prefix, quote = literal
                out.append(self._string(prefix, quote, enclosing=()))
                continue
            out.append(char)
            self.pos += 1
        return "".join(out)

    def _string_start(self) -> tuple[str, str] | None:
        """(prefix, quote) when a string literal starts here."""
        if self.pos > 0 and _IDENT.match(self.text[self.pos - 1]):
            return None
        match = _PREFIX.match(self.text, self.pos)
        if match is None:
            return None
        return (match.group(1) or ""), match.group(2)

    def _string(self, prefix: str, quote: str, enclosing: tuple[str, ...]) -> str:
        """Copy or rewrite the literal starting at ``self.pos`` (its prefix included)."""
        self.pos += len(prefix) + len(quote)
        if "f" in prefix.lower() or "t" in prefix.lower():
            return self._fstring(prefix, quote, enclosing)
        start = self.pos
        self._skip_plain(quote, raw="r" in prefix.lower())
        return prefix + quote + self.text[start : self.pos]

    def _skip_plain(self, quote: str, *, raw: bool) -> None:
        text = self.text
        while self.pos < len(text):
            if text[self.pos] == "\\":
                self.pos += 2
                continue
            if text.startswith(quote, self.pos):
                self.pos += len(quote)
                return
            if len(quote) == 1 and text[self.pos] == "\n":
                raise UnsupportedSyntaxError("unterminated string")
            self.pos += 1
        raise UnsupportedSyntaxError("unterminated string")

    def _fstring(self, prefix: str, quote: str, enclosing: tuple[str, ...]) -> str:
        """An f-string body up to its closing quote, rewritten for the older grammar."""
        prefix = prefix.replace("t", "f").replace("T", "F")
        parts: list[str] = []
        multiline = False
        text = self.text
        inner_enclosing = (*enclosing, quote)
        while True:
            if self.pos >= len(text):
                raise UnsupportedSyntaxError("unterminated f-string")
            if text.startswith(quote, self.pos):
                self.pos += len(quote)
                break
            char = text[self.pos]
            if char == "\\":
                parts.append(text[self.pos : self.pos + 2])
                self.pos += 2
                continue
            if text.startswith("{{", self.pos) or text.startswith("}}", self.pos):
                parts.append(text[self.pos : self.pos + 2])
                self.pos += 2
                continue
            if char == "{":
                multiline = self._braced_field(parts, inner_enclosing) or multiline
                continue
            if char == "\n" and len(quote) == 1:
                raise UnsupportedSyntaxError("newline in a single-quoted f-string")
            parts.append(char)
            self.pos += 1
        body = "".join(parts)
        chosen = _quote_for(quote, enclosing, body, triple=multiline or len(quote) == 3)
        return prefix + chosen + body + chosen

    def _braced_field(self, out: list[str], enclosing: tuple[str, ...]) -> bool:
        """Read the replacement field that opens at ``{`` into ``out``, braces kept; True when it spans lines.

        An f-string's text and a format spec nest fields the same way, so both read them here.
        """
        self.pos += 1
        field, spans_lines = self._field(enclosing)
        out.append("{" + field + "}")
        return spans_lines

    def _field(self, enclosing: tuple[str, ...]) -> tuple[str, bool]:
        """A replacement field's expression, conversion and format spec, up to its ``}``."""
        out: list[str] = []
        depth = 0
        spans_lines = False
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char == "#":
                end = text.find("\n", self.pos)
                if end == -1:
                    raise UnsupportedSyntaxError("comment runs to the end of the file")
                self.pos = end
                continue
            if char == "\n":  # kept: a triple-quoted f-string's field may span lines in every version
                spans_lines = True
                out.append("\n")
                self.pos += 1
                continue
            if char == "\\":
                raise UnsupportedSyntaxError("backslash in a replacement field")
            literal = self._string_start()
            if literal is not None:
                prefix, quote = literal
                out.append(self._inner_string(prefix, quote, enclosing))
                continue
            if char in "([{":
                depth += 1
            elif char in ")]" or (char == "}" and depth > 0):
                depth -= 1
            elif char == "}" and depth == 0:
                self.pos += 1
                return "".join(out), spans_lines
            elif char == ":" and depth == 0 and not text.startswith(":=", self.pos):
                out.append(":")
                self.pos += 1
                spec, spec_lines = self._format_spec(enclosing)
                return "".join(out) + spec, spans_lines or spec_lines
            out.append(char)
            self.pos += 1
        raise UnsupportedSyntaxError("unterminated replacement field")

    def _format_spec(self, enclosing: tuple[str, ...]) -> tuple[str, bool]:
        """A format spec (may nest replacement fields), up to the field's closing ``}``."""
        out: list[str] = []
        spans_lines = False
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char == "{":
                spans_lines = self._braced_field(out, enclosing) or spans_lines
                continue
            if char == "}":
                self.pos += 1
                return "".join(out), spans_lines
            if char == "\n":
                raise UnsupportedSyntaxError("newline in a format spec")
            out.append(char)
            self.pos += 1
        raise UnsupportedSyntaxError("unterminated format spec")

    def _inner_string(self, prefix: str, quote: str, enclosing: tuple[str, ...]) -> str:
        """A string literal inside a replacement field, spelled with no enclosing quote and no backslash."""
        if "f" in prefix.lower() or "t" in prefix.lower():
            self.pos += len(prefix) + len(quote)
            return self._fstring(prefix, quote, enclosing)
        start = self.pos
        self.pos += len(prefix) + len(quote)
        self._skip_plain(quote, raw="r" in prefix.lower())
        literal = self.text[start : self.pos]
        if "b" in prefix.lower():
            if any(q[0] in literal[len(prefix) :] for q in enclosing) or "\\" in literal:
                raise UnsupportedSyntaxError("bytes literal needing re-spelling inside an f-string")
            return literal
        clashes = any(quote[0] == q[0] for q in enclosing) or "\\" in literal
        if not clashes:
            return literal
        try:
            value = ast.literal_eval(literal)
        except (SyntaxError, ValueError) as exc:
            raise UnsupportedSyntaxError("string literal that cannot be evaluated") from exc
        return _spell(str(value), enclosing)


def _spell(value: str, enclosing: tuple[str, ...]) -> str:
    """``value`` as an expression with no backslash and none of the enclosing quote characters."""
    used = {q[0] for q in enclosing}
    quote = next((q for q in ("'", '"') if q not in used), None)
    chunks: list[str] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            chunks.append(f"{quote}{''.join(run)}{quote}")
            run.clear()

    for char in value:
        if quote is None or char in "\\'\"\n\r" or not char.isprintable():
            flush()
            chunks.append(f"chr({ord(char)})")
        else:
            run.append(char)
    flush()
    if not chunks:
        return f"{quote}{quote}" if quote else "str()"
    return chunks[0] if len(chunks) == 1 else "(" + "+".join(chunks) + ")"


def _quote_for(quote: str, enclosing: tuple[str, ...], body: str, *, triple: bool) -> str:
    """A quote for an f-string that no enclosing f-string uses (older grammars cannot nest the same one)."""
    options = [quote, *_QUOTES] if not triple else [q for q in (quote, '"""', "'''") if len(q) == 3]
    for option in options:
        if option in enclosing or any(e[0] == option[0] for e in enclosing):
            continue
        if len(option) == 1 and option in body:
            continue
        if len(option) == 3 and option in body:
            continue
        return option
    raise UnsupportedSyntaxError("f-strings nested deeper than the quote kinds allow")
