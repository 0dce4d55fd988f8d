"""Shipped pattern rules for languages other than Python, and how they run.

Each rule is one YAML file under ``fluxdrive/data/rules/<dir>/<id>.yml``::

    id: js-eval                      # unique; starts with its language prefix
    languages: [javascript, typescript, tsx]
    engine: ast-grep                 # or "lines" (a careful per-line matcher)
    tags: [security]                 # the first tag says which agent owns it
    severity: P0
    title: eval() runs a string built at runtime ({A})
    why: Anything that reaches the string runs as code in this process.
    fix: Parse the data (JSON.parse) or dispatch on a fixed table instead.
    rule: {pattern: "eval($A)"}      # ast-grep rule; with constraints/utils
    constraints: {A: {not: {kind: string}}}
    examples:
      match: ["eval(userInput)"]
      no_match: ["eval('1 + 1')"]

``title`` may name ast-grep metavariables (``{A}``) and is filled from the
match. ``lines`` rules use ``match`` (a Python regex searched on each line)
and optional ``unless`` (a regex that excuses the line), with ``files``
globs saying which files they read. Every rule must carry examples: the
test suite runs each one, so a rule cannot ship without proof it fires on
what it should and stays quiet on what it should not.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

Engine = Literal["ast-grep", "lines"]
RuleSeverity = Literal["P0", "P1", "P2", "P3"]

AST_GREP_LANGUAGES = (
    "javascript",
    "typescript",
    "tsx",
    "go",
    "java",
    "ruby",
    "php",
    "bash",
    "yaml",
)
LINE_LANGUAGES = ("dockerfile", "yaml", "bash", "any")

EXTENSIONS: dict[str, str] = {
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".java": "java",
    ".rb": "ruby",
    ".php": "php",
    ".sh": "bash",
    ".bash": "bash",
    ".yml": "yaml",
    ".yaml": "yaml",
}

_ID = r"^[a-z0-9]+(-[a-z0-9]+)+$"
_METAVAR = re.compile(r"\{([A-Z][A-Z0-9_]*)\}")


class RuleError(Exception):
    """A shipped rule file is invalid (a packaging bug, caught by the tests)."""


class Examples(BaseModel):
    """Snippets the rule must match, and snippets it must not."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    match: list[str] = Field(min_length=1)
    no_match: list[str] = Field(min_length=1)
    path: str | None = None  # file name the snippets pretend to have


class RuleSpec(BaseModel):
    """One validated rule."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=_ID)
    languages: list[str] = Field(min_length=1)
    engine: Engine = "ast-grep"
    tags: list[str] = Field(min_length=1)
    severity: RuleSeverity
    title: str = Field(min_length=10)
    why: str = Field(min_length=10)
    fix: str = Field(min_length=5)
    rule: dict[str, Any] | None = None
    constraints: dict[str, Any] | None = None
    utils: dict[str, Any] | None = None
    match: str | None = None
    unless: str | None = None
    files: list[str] = Field(default_factory=list)
    examples: Examples

    @model_validator(mode="after")
    def _engine_fields(self) -> RuleSpec:
        if self.engine == "ast-grep":
            if self.rule is None:
                raise ValueError("an ast-grep rule needs 'rule'")
            unknown = [lang for lang in self.languages if lang not in AST_GREP_LANGUAGES]
            if unknown:
                raise ValueError(f"ast-grep cannot parse {unknown}")
            if self.match or self.unless:
                raise ValueError("'match'/'unless' belong to lines rules")
        else:
            if not self.match:
                raise ValueError("a lines rule needs 'match'")
            for pattern in (self.match, self.unless):
                if pattern:
                    re.compile(pattern)
            unknown = [lang for lang in self.languages if lang not in LINE_LANGUAGES]
            if unknown:
                raise ValueError(f"lines rules take languages from {LINE_LANGUAGES}, not {unknown}")
            if self.rule is not None:
                raise ValueError("'rule' belongs to ast-grep rules")
        return self

    @property
    def rule_id(self) -> str:
        """The id reported with findings: ``astgrep:<id>`` or ``lines:<id>``."""
        return f"{'astgrep' if self.engine == 'ast-grep' else 'lines'}:{self.id}"

    @property
    def owner_tag(self) -> str:
        """The tag that decides which agent reports the rule's hits."""
        return self.tags[0]

    def applies_to(self, path: str, language: str | None) -> bool:
        """True when this rule should read the file at ``path``."""
        if self.files:
            name = PurePosixPath(path)
            return any(fnmatch.fnmatch(path, glob) or fnmatch.fnmatch(name.name, glob) for glob in self.files)
        return language is not None and language in self.languages

    def config(self) -> dict[str, Any]:
        """The ast-grep config mapping for ``SgNode.find_all``."""
        data: dict[str, Any] = {"rule": self.rule}
        if self.constraints:
            data["constraints"] = self.constraints
        if self.utils:
            data["utils"] = self.utils
        return data


@dataclass(frozen=True, slots=True)
class RuleMatch:
    """One place a rule fired: 1-based lines and the filled-in title."""

    rule: RuleSpec
    line: int
    end_line: int
    title: str
    text: str


def rules_dir() -> Path:
    """``fluxdrive/data/rules`` inside the installed package."""
    return Path(str(resources.files("fluxdrive") / "data" / "rules"))


def _load(path: Path) -> RuleSpec:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        spec = RuleSpec.model_validate(data)
    except (yaml.YAMLError, ValidationError, ValueError, re.error) as exc:
        raise RuleError(f"{path}: {exc}") from exc
    if spec.id != path.stem:
        raise RuleError(f"{path}: id {spec.id!r} does not match the file name")
    return spec


@functools.lru_cache(maxsize=1)
def load_rules() -> tuple[RuleSpec, ...]:
    """Every shipped rule, sorted by id (validated once per process)."""
    specs = [_load(p) for p in sorted(rules_dir().glob("*/*.yml"))]
    seen: set[str] = set()
    for spec in specs:
        if spec.id in seen:
            raise RuleError(f"duplicate rule id {spec.id}")
        seen.add(spec.id)
    return tuple(sorted(specs, key=lambda s: s.id))


def language_of(path: str, first_line: str = "") -> str | None:
    """The ast-grep language of a file, from its extension or shebang."""
    name = PurePosixPath(path).name
    if name == "Dockerfile" or name.startswith("Dockerfile.") or name.endswith(".dockerfile"):
        return "dockerfile"
    language = EXTENSIONS.get(PurePosixPath(path).suffix.lower())
    if language is None and first_line.startswith("#!") and re.search(r"\b(ba)?sh\b", first_line):
        return "bash"
    return language


def _fill(title: str, metavars: Mapping[str, str]) -> str:
    def replace(match: re.Match[str]) -> str:
        value = " ".join(metavars.get(match.group(1), match.group(0)).split())
        return value if len(value) <= 48 else value[:47] + "\u2026"

    return _METAVAR.sub(replace, title)


def _ast_grep_matches(spec: RuleSpec, root: Any) -> list[RuleMatch]:
    out = []
    names = sorted(set(_METAVAR.findall(spec.title)))
    for node in root.find_all(spec.config()):
        found = {}
        for name in names:
            captured = node.get_match(name)
            if captured is not None:
                found[name] = captured.text()
        span = node.range()
        out.append(
            RuleMatch(
                spec,
                span.start.line + 1,
                span.end.line + 1,
                _fill(spec.title, found),
                node.text(),
            )
        )
    return out


def _line_matches(spec: RuleSpec, text: str) -> list[RuleMatch]:
    assert spec.match is not None
    pattern = re.compile(spec.match)
    excuse = re.compile(spec.unless) if spec.unless else None
    out = []
    for number, line in enumerate(text.splitlines(), start=1):
        found = pattern.search(line)
        if found and not (excuse and excuse.search(line)):
            metavars = {k.upper(): v for k, v in found.groupdict().items() if v}
            out.append(RuleMatch(spec, number, number, _fill(spec.title, metavars), line.strip()))
    return out


def parse(text: str, language: str) -> Any:
    """Parse ``text`` with ast-grep (imported lazily: it is a native module)."""
    from ast_grep_py import SgRoot

    return SgRoot(text, language).root()


def scan_text(text: str, path: str, rules: Sequence[RuleSpec], language: str | None = None) -> list[RuleMatch]:
    """Run every applicable rule on one file's text; parse it at most once per language."""
    first = text.split("\n", 1)[0]
    language = language or language_of(path, first)
    applicable = [r for r in rules if r.applies_to(path, language)]
    matches: list[RuleMatch] = []
    roots: dict[str, Any] = {}
    for spec in applicable:
        if spec.engine == "lines":
            matches.extend(_line_matches(spec, text))
            continue
        parse_as = language if language in spec.languages else spec.languages[0]
        if parse_as not in roots:
            roots[parse_as] = parse(text, parse_as)
        matches.extend(_ast_grep_matches(spec, roots[parse_as]))
    return sorted(matches, key=lambda m: (m.line, m.rule.id))


def select(rules: Iterable[RuleSpec], wanted: Iterable[str]) -> list[RuleSpec]:
    """Rules whose owner tag or id is in ``wanted`` (an agent's ``static.ast_grep``)."""
    keys = set(wanted)
    return [r for r in rules if r.owner_tag in keys or r.id in keys]
