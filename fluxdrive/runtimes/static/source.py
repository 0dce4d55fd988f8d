"""Load what the static agents review: source files, documents, and the code inside documents.

Binary files are skipped with a note; text that is not valid UTF-8 is decoded
with replacement characters (also noted) rather than crashing. Files that are
not the project's own code - vendored, generated, minified, or another tool's
report (:mod:`~fluxdrive.runtimes.static.origin`) - are skipped and listed
too. A markdown document contributes itself (for document checks) and each
fenced code block as a separate source in the block's language, so
``server.js`` pasted into a plan is analyzed like ``server.js`` - and its
findings point back at the document line (``plan.md:42``) and, when a heading
names the file, at the file's own line (``server.js:19``).

A code block is an *example* (``Source.example``) unless its document says it
runs as code: a Markdown notebook (Jupytext or MyST-NB front matter with
``jupyter:``, ``jupytext:``, ``kernelspec:`` or ``file_format: mystnb``).
:mod:`~fluxdrive.runtimes.static.snippets` says what is reported on examples.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from fluxdrive.core.confine import read_confined, why_unreadable
from fluxdrive.errors import InputError
from fluxdrive.runtimes.static.excludes import Excludes
from fluxdrive.runtimes.static.origin import GitAttributes, not_own, tool_report, vendored_directory
from fluxdrive.runtimes.static.rules import language_of

DOCUMENT_SUFFIXES = {".md", ".markdown", ".mdx"}
PYTHON_SUFFIXES = {".py", ".pyi", ".pyw"}

SUFFIX_FOR = {
    "python": ".py",
    "javascript": ".js",
    "typescript": ".ts",
    "tsx": ".tsx",
    "go": ".go",
    "java": ".java",
    "ruby": ".rb",
    "php": ".php",
    "bash": ".sh",
    "yaml": ".yaml",
    "dockerfile": ".dockerfile",
}
_INFO = {
    "python": "python", "py": "python", "python3": "python", "py3": "python",
    "javascript": "javascript", "js": "javascript", "jsx": "javascript", "node": "javascript", "mjs": "javascript",
    "typescript": "typescript", "ts": "typescript", "tsx": "tsx",
    "go": "go", "golang": "go", "java": "java", "ruby": "ruby", "rb": "ruby", "php": "php",
    "bash": "bash", "sh": "bash", "shell": "bash", "zsh": "bash",
    "yaml": "yaml", "yml": "yaml", "dockerfile": "dockerfile", "docker": "dockerfile",
}  # fmt: skip
_GUESSES = (
    ("php", re.compile(r"^<\?php", re.M)),
    ("go", re.compile(r"^package \w+\s*$|^func \w+\(", re.M)),
    ("python", re.compile(r"^(def |class \w+.*:$|import \w|from [\w.]+ import )", re.M)),
    ("dockerfile", re.compile(r"^FROM \S+", re.M)),
    ("yaml", re.compile(r"^(apiVersion|kind|on|jobs):", re.M)),
    (
        "javascript",
        re.compile(r"\b(const|let) \w+ = |=> \{|require\(|module\.exports|console\.log"),
    ),
    ("bash", re.compile(r"^#!/(usr/)?bin/(env )?(ba)?sh|^\s*(set -e|echo |export \w+=)", re.M)),
)
_FILE_NAME = re.compile(
    r"(?<![\w/.-])([\w./-]*\w\.(?:py|js|mjs|jsx|ts|tsx|go|java|rb|php|sh|ya?ml)|Dockerfile(?:\.\w+)?)\b"
)


@dataclass(frozen=True, slots=True)
class Source:
    """One unit of analysis.

    ``path`` is what findings report (the document, for a code block);
    ``name`` is the file name analyzers see; ``line_offset`` maps an
    analyzer's line back to ``path``; ``also`` is the file a heading named.
    """

    path: str
    text: str
    language: str | None
    name: str
    line_offset: int = 0
    also: str | None = None
    block_of: str | None = None
    example: bool = False  # a code block its document shows rather than runs (see runs_as_code)

    @property
    def is_document(self) -> bool:
        """A markdown document (checked by document checks)."""
        return self.language == "markdown"

    def location(self, line: int) -> tuple[str, int, str | None]:
        """(reported path, reported line, also-location) for an analyzer line."""
        also = f"{self.also}:{line}" if self.also else None
        return self.path, self.line_offset + line, also


def detect_language(path: str, text: str) -> str | None:
    """The analysis language of a whole file (``markdown`` for documents)."""
    suffix = PurePosixPath(path).suffix.lower()
    if suffix in DOCUMENT_SUFFIXES:
        return "markdown"
    if suffix in PYTHON_SUFFIXES:
        return "python"
    first = text.split("\n", 1)[0]
    if first.startswith("#!") and "python" in first:
        return "python"
    return language_of(path, first)


def _guess(code: str) -> str | None:
    for language, pattern in _GUESSES:
        if pattern.search(code):
            return language
    return None


def _named_file(lines: list[str], fence_index: int) -> str | None:
    """A file named on the line before the fence or in the nearest heading above."""
    for index in range(fence_index - 1, -1, -1):
        line = lines[index].strip()
        if not line:
            continue
        is_heading = line.startswith("#")
        if is_heading or index == fence_index - 1 or index >= fence_index - 2:
            match = _FILE_NAME.search(line)
            if match:
                return match.group(1)
        if is_heading:
            return None
    return None


_NOTEBOOK = re.compile(r"^(?:jupyter|jupytext|kernelspec)\s*:|^file_format\s*:\s*[\"']?mystnb\b", re.M)
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
MAX_CAPTION_WORDS = 20  # prose around a code listing that only names it: a title, a line of what it is


def runs_as_code(text: str) -> bool:
    """A markdown document whose code blocks are code, not examples.

    Two kinds: a notebook by its front matter (Jupytext, MyST-NB), and a
    listing - a document that is its code with at most a caption (the
    reference's qualification format wraps a script as ``# release.sh`` and
    one fenced block; a paste of a file into a review looks the same).
    Everything else - a README, a tutorial, an RFC - explains its code to a
    reader, who copies excerpts of it: a snippet there is an example.
    """
    lines = text.split("\n", 400)
    if lines and lines[0].strip() == "---":
        end = next((i for i, line in enumerate(lines[1:400], start=1) if line.strip() in ("---", "...")), None)
        if end is not None and _NOTEBOOK.search("\n".join(lines[1:end])):
            return True
    return _listing(text)


def _listing(text: str) -> bool:
    """At least one code block, and outside the blocks only headings and at most one line of caption."""
    words, lines, blocks, fence = 0, 0, 0, ""
    for line in text.splitlines():
        opening = _FENCE.match(line)
        if fence:
            if opening and line.strip().strip(fence[0]) == "" and line.strip().startswith(fence[:3]):
                fence = ""
            continue
        if opening:
            fence, blocks = opening.group(1), blocks + 1
            continue
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        words, lines = words + len(line.split()), lines + 1
        if lines > 1 or words > MAX_CAPTION_WORDS:  # a badge row, a paragraph: a document about its code
            return False
    return blocks > 0


def code_blocks(document: str, text: str) -> Iterator[Source]:
    """Every fenced code block of a markdown document in a language we analyze."""
    lines = text.splitlines()
    example = not runs_as_code(text)
    index, count = 0, 0
    while index < len(lines):
        opening = re.match(r"^\s{0,3}(`{3,}|~{3,})\s*([\w+#.-]*)", lines[index])
        if not opening:
            index += 1
            continue
        fence, info = opening.group(1), opening.group(2).lower()
        end = next(
            (
                j
                for j in range(index + 1, len(lines))
                if lines[j].strip().startswith(fence[:3]) and lines[j].strip().strip(fence[0]) == ""
            ),
            len(lines),
        )
        code = "\n".join(lines[index + 1 : end]) + "\n"
        language = _INFO.get(info) if info else _guess(code)
        if language in SUFFIX_FOR and code.strip():
            count += 1
            named = _named_file(lines, index)
            same_language = named is not None and detect_language(named, "") in (
                language,
                "javascript" if language in ("typescript", "tsx") else language,
            )
            yield Source(
                path=document,
                text=code,
                language=language,
                name=f"{document}.block{count}{SUFFIX_FOR[language]}",
                line_offset=index + 1,
                also=named if same_language else None,
                block_of=document,
                example=example,
            )
        index = end + 1


@dataclass(frozen=True, slots=True)
class LoadedSources:
    """The sources to analyze, and what was skipped or repaired on the way.

    ``skipped`` pairs each file that was not analyzed with the reason (too
    large, binary, a symlink out of the root, unreadable, vendored,
    generated, minified, another tool's report): reports list them,
    so a file nobody looked at never passes for a clean one.
    """

    sources: tuple[Source, ...]
    notes: tuple[str, ...]
    lines: int
    skipped: tuple[tuple[str, str], ...] = ()
    reviewed: str = ""  # the directory the user named: a file's place is judged below it (placement.below)


def review_scope(input_type: str, files: tuple[str, ...]) -> tuple[bool, str]:
    """(named, reviewed) for :func:`load_sources`: did the user name one file, and which directory.

    A file or document input is named; for a directory input the reviewed
    directory is the common parent of its files (``vendor`` for ``fluxdrive
    review vendor/``); a diff names neither.
    """
    if input_type in ("file", "document"):
        return True, ""
    parents = [posixpath.dirname(name) for name in files]
    if input_type != "directory" or not parents or not all(parents):
        return False, ""
    return False, posixpath.commonpath(parents)


def load_sources(
    root: Path,
    files: tuple[str, ...],
    *,
    max_bytes: int,
    named: bool = False,
    reviewed: str = "",
    excludes: Excludes | None = None,
    revision: str | None = None,
) -> LoadedSources:
    """Read every file under ``root`` (confined to it); expand markdown code blocks.

    Files that are not the project's own code are left out and listed in
    ``skipped`` (see :mod:`~fluxdrive.runtimes.static.origin`): other tools'
    reports always, vendored, generated and minified files unless ``named``
    (the user named the one file to review, so it is reviewed whatever it
    is); ``reviewed``, the directory the user named, is never itself counted
    as vendored. The files of one vendored directory are listed as that directory
    (a committed ``vendor/`` may hold thousands), unless nothing else was
    analyzed. Paths ``excludes`` matches (``.fluxdriveignore``, ``static.exclude``) are left out
    and listed too, even a named file: the project said so.
    """
    sources: list[Source] = []
    notes: list[str] = []
    skipped: list[tuple[str, str]] = []
    vendored: dict[str, list[str]] = {}
    total = 0
    root = Path(root)
    attributes = GitAttributes(root, revision)  # a diff: its base commit's .gitattributes
    for relative in files:
        excluded = excludes.reason(relative) if excludes is not None else None
        if excluded is not None:
            skipped.append((relative, excluded))
            continue
        foreign = None if named else not_own(relative, None, attributes, reviewed)
        if foreign is not None:
            directory = vendored_directory(relative, reviewed)
            if directory is not None and foreign.startswith("vendored (under"):
                vendored.setdefault(directory, []).append(relative)
            else:
                skipped.append((relative, foreign))
            continue
        reason = why_unreadable(relative, root)
        if reason is not None:
            skipped.append((relative, reason))
            continue
        try:
            data = read_confined(root / relative, root, "file", limit=max_bytes)
        except InputError as exc:
            skipped.append((relative, _skip_reason(exc, max_bytes)))
            continue
        if b"\x00" in data[:8192]:
            skipped.append((relative, "binary file"))
            continue
        text = data.decode("utf-8", errors="replace")
        report = tool_report(relative, text)
        foreign = f"tool output, not code ({report})" if report else None
        if foreign is None and not named:
            foreign = not_own(relative, text, attributes)
        if foreign is not None:
            skipped.append((relative, foreign))
            continue
        if "\ufffd" in text and "\ufffd".encode() not in data:
            notes.append(f"{relative} is not valid UTF-8; decoded with replacement characters")
        total += text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        language = detect_language(relative, text)
        sources.append(Source(relative, text, language, relative))
        if language == "markdown":
            sources.extend(code_blocks(relative, text))
    for directory, inside in vendored.items():
        if sources:
            count = len(inside)
            skipped.append((directory, f"vendored directory ({count:,} file{'s' if count != 1 else ''})"))
        else:  # nothing else was analyzed: one line per file, so the review counts as incomplete, not clean
            skipped.extend((path, f"vendored (under {directory})") for path in inside)
    notes.extend(f"skipped {path}: {why}" for path, why in skipped)
    return LoadedSources(tuple(sources), tuple(notes), total, tuple(skipped), reviewed)


def _skip_reason(error: InputError, max_bytes: int) -> str:
    if "too large" in error.message:
        size = error.message.rsplit("(", 1)[-1].split(" bytes", 1)[0]
        return f"{size} bytes, over the {max_bytes:,}-byte limit (static.max_file_bytes)"
    return error.message
