"""Read another analyzer's SARIF 2.1.0 log into results fluxdrive can weigh against its own findings.

What is read, and where each tool puts it:

- the tool: ``runs[].tool.driver.name`` ("Semgrep OSS", "CodeQL", "Bandit"),
  shortened to a stable id (``semgrep``, ``codeql``, ``bandit``);
- the rule: ``results[].ruleId`` (or ``rule.id``, or ``ruleIndex``) and its
  descriptor in ``tool.driver.rules`` or ``tool.extensions[].rules`` (CodeQL);
- the severity: ``results[].level``, else the rule's
  ``defaultConfiguration.level`` (semgrep leaves the result's level out),
  else SARIF's default ``warning``; error -> P1, warning -> P2, note/none ->
  P3. A ``security-severity`` (GitHub's CVSS-like score, on the rule or the
  result) of 9.0 or more makes it P0, of 7.0 or more P1;
- the weakness: CWE ids in the rule's or the result's ``properties.tags``
  (``CWE-89: ...`` from semgrep, ``external/cwe/cwe-089`` from CodeQL and
  bandit), ``properties.cwe``, the rule's ``relationships`` and the result's
  ``taxa`` into a CWE taxonomy. A ``security`` tag, a CWE or a
  security-severity marks it a security result;
- the place: the first location's ``artifactLocation`` (``uri``, or
  ``index`` into ``run.artifacts``) resolved through ``uriBaseId`` and
  ``run.originalUriBaseIds``, and ``region.startLine``.

Paths. A relative URI (semgrep's, bandit's, CodeQL's under ``%SRCROOT%``) is
relative to the project root; an absolute ``file://`` URI must lie in it.
Anything that leaves the root - a ``file:///etc/...`` URI, ``../`` that
climbs out, a symlink inside the root that points out of it, another host,
an ``https:`` URI - is dropped with a note: a result there is not about this
project, and its text must not reach this project's reports.

Left out quietly but counted: results a suppression accepted (``# nosemgrep``
kept by ``--sarif``, CodeQL's dismissed alerts), results a baseline marks
``absent``, and kinds that are not a failure (``pass``, ``notApplicable``,
``informational``).

A file that is missing, unreadable, not JSON or not a SARIF 2.1.0 log is a
:class:`SarifError` (exit 2, one line) before the review runs: the user
asked for this evidence, so a review without it must not look complete.
Message text is masked (credentials, terminal controls) and folded to one
line here, at the edge, so nothing downstream sees it raw.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

from fluxdrive.core.confine import confine, is_inside
from fluxdrive.core.masking import scrub
from fluxdrive.core.paths import read_regular
from fluxdrive.errors import InputError

SARIF_VERSION = "2.1.0"
MAX_SARIF_BYTES = 256 * 1024 * 1024
MAX_RESULTS = 100_000  # per file: more is left out, with a note
MAX_MESSAGE = 200
LEVEL_SEVERITY = {"error": "P1", "warning": "P2", "note": "P3", "none": "P3"}
FAILING_KINDS = frozenset({"fail", "open", "review"})
KNOWN_TOOLS = ("semgrep", "codeql", "bandit", "gosec", "eslint", "pylint", "trivy", "checkov", "snyk", "bearer")
_CWE = re.compile(r"(?i)\bcwe[-_/ :]?0*(\d{1,5})\b")
_PLACEHOLDER = re.compile(r"\{(\d+)\}")


class SarifError(InputError):
    """A SARIF file named with --import-sarif (or imports.sarif) cannot be used (exit 2)."""


@dataclass(frozen=True, slots=True)
class ImportedResult:
    """One failing result of another analyzer, at a place inside the project."""

    tool: str  # stable id: semgrep, codeql, bandit, or the driver name as a slug
    rule: str  # the tool's rule id, as the tool spells it
    path: str  # relative to the project root, POSIX separators
    line: int
    severity: str  # P0..P3
    cwe: tuple[str, ...]  # CWE-89, ...
    security: bool
    message: str  # masked, one line, bounded

    @property
    def reference(self) -> str:
        """``semgrep:python.lang.security...``: the rule as findings.json names rules."""
        return f"{self.tool}:{self.rule}"


@dataclass(frozen=True, slots=True)
class SarifImport:
    """What one SARIF file brought: its results inside the project, and what was left out."""

    source: str  # the file as the user named it
    tools: tuple[str, ...]
    results: tuple[ImportedResult, ...]
    notes: tuple[str, ...] = ()  # warnings: results dropped because they point outside the project
    skipped: Mapping[str, int] = field(default_factory=dict)  # why -> count, for the info line


def load_imports(
    flag_paths: Sequence[Path | str], config_paths: Sequence[str], root: Path, cwd: Path
) -> list[SarifImport]:
    """Every SARIF file of one review: the ``--import-sarif`` files (the user's, from anywhere), then
    ``imports.sarif`` (relative to the project root and confined to it: a project's own config must not make
    fluxdrive read a file outside the project into its reports). A file named twice is read once."""
    chosen: dict[Path, str] = {}
    for given in flag_paths:
        path = Path(given).expanduser()
        path = path if path.is_absolute() else Path(cwd) / path
        chosen.setdefault(Path(os.path.abspath(path)), str(given))
    for given in config_paths:
        try:
            real = confine(Path(root) / given, Path(root), "imports.sarif file")
        except InputError as exc:
            raise SarifError(exc.message, hint="imports.sarif may only name files inside the project") from None
        chosen.setdefault(real, given)
    return [load_sarif(path, root, shown=shown) for path, shown in chosen.items()]


def load_sarif(path: Path, root: Path, *, shown: str | None = None) -> SarifImport:
    """The failing results of the SARIF log at ``path`` that lie inside ``root``; :class:`SarifError` when the
    file cannot be read as SARIF 2.1.0."""
    shown = shown or str(path)
    try:
        data = read_regular(Path(path), "SARIF file", limit=MAX_SARIF_BYTES)
    except InputError as exc:
        raise SarifError(exc.message, hint="pass the file your analyzer wrote with its SARIF option") from None
    try:
        log = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise SarifError(f"SARIF file {shown} is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise SarifError(f"SARIF file {shown} is not JSON (line {exc.lineno}: {exc.msg})") from None
    if not isinstance(log, dict) or not isinstance(log.get("runs"), list):
        raise SarifError(f"{shown} is not a SARIF log (no 'runs' list)", hint="pass a SARIF 2.1.0 file")
    if log.get("version") != SARIF_VERSION:
        found = log.get("version")
        raise SarifError(
            f"{shown} is SARIF version {str(found)[:20]!r}, fluxdrive reads {SARIF_VERSION}",
            hint="ask your analyzer for SARIF 2.1.0",
        )
    reader = _Reader(Path(root), shown)
    for number, run in enumerate(log["runs"]):
        if not isinstance(run, dict):
            raise SarifError(f"{shown}: runs[{number}] is not an object")
        reader.run(run)
    return reader.finish()


class _Reader:
    """Collects results across the runs of one file."""

    def __init__(self, root: Path, shown: str) -> None:
        self.root = Path(os.path.abspath(root))
        self.real_root = self.root.resolve()
        self.shown = shown
        self.tools: dict[str, None] = {}
        self.results: list[ImportedResult] = []
        self.outside: list[str] = []
        self.skipped: dict[str, int] = {}

    def _skip(self, why: str) -> None:
        self.skipped[why] = self.skipped.get(why, 0) + 1

    def run(self, run: dict[str, Any]) -> None:
        tool = _mapping(run.get("tool"))
        driver = _mapping(tool.get("driver"))
        name = driver.get("name")
        tool_id = tool_slug(name if isinstance(name, str) else "")
        self.tools[tool_id] = None
        rules = _RuleBook(driver, tool.get("extensions"))
        bases = _mapping(run.get("originalUriBaseIds"))
        artifacts = _list(run.get("artifacts"))
        for result in _list(run.get("results")):
            if len(self.results) >= MAX_RESULTS:
                self._skip(f"over {MAX_RESULTS:,} results")
                continue
            if isinstance(result, dict):
                self._result(result, tool_id, rules, bases, artifacts)
            else:
                self._skip("not an object")

    def _result(
        self,
        result: dict[str, Any],
        tool: str,
        rules: _RuleBook,
        bases: Mapping[str, Any],
        artifacts: list[Any],
    ) -> None:
        if result.get("kind", "fail") not in FAILING_KINDS:
            self._skip("not a failure")
            return
        if _suppressed(result.get("suppressions")) or result.get("baselineState") == "absent":
            self._skip("suppressed")
            return
        rule_id, rule = rules.find(result)
        place = _place(result, artifacts)
        if place is None:
            self._skip("no file location")
            return
        uri, base, line = place
        path, why = self._path(uri, base, bases)
        if path is None:
            self.outside.append(f"{uri} ({why})")
            return
        properties = _mapping(result.get("properties"))
        rule_properties = _mapping(rule.get("properties"))
        tags = [*_strings(rule_properties.get("tags")), *_strings(properties.get("tags"))]
        cwe = _cwes(tags, rule, result, rule_properties, properties)
        score = _score(properties.get("security-severity"), rule_properties.get("security-severity"))
        level = result.get("level") or _mapping(rule.get("defaultConfiguration")).get("level") or "warning"
        self.results.append(
            ImportedResult(
                tool=tool,
                rule=rule_id,
                path=path,
                line=line,
                severity=severity_of(str(level), score),
                cwe=cwe,
                security=bool(cwe) or score is not None or "security" in {t.lower() for t in tags},
                message=_message(result, rule, rule_id),
            )
        )

    def _path(self, uri: str, base: str | None, bases: Mapping[str, Any]) -> tuple[str | None, str]:
        """The project-relative path of ``uri``, or None and why it is not inside the project."""
        full = uri
        for _depth in range(5):  # a base may itself name a base; a cycle stops here
            entry = _mapping(bases.get(base)) if base else {}
            prefix = entry.get("uri")
            if not isinstance(prefix, str):
                break
            full = urljoin(prefix if prefix.endswith("/") else prefix + "/", full)
            base = entry.get("uriBaseId") if isinstance(entry.get("uriBaseId"), str) else None
        parts = urlsplit(full)
        if parts.scheme == "file":
            if parts.netloc not in ("", "localhost"):
                return None, f"a file on host {parts.netloc}"
            text = unquote(parts.path)
        elif len(parts.scheme) > 1:
            return None, f"not a file: a {parts.scheme}: URI"
        else:
            text = unquote(full)
        candidate = Path(os.path.normpath(text if PurePosixPath(text).is_absolute() else self.root / text))
        relative = _relative_to(candidate, self.root) or _relative_to(_real(candidate), self.real_root)
        if relative is None:
            return None, "outside the project root"
        if not is_inside(self.root / relative, self.root):
            return None, "a symlink out of the project root"
        return relative, ""

    def finish(self) -> SarifImport:
        notes = []
        if self.outside:
            shown = "; ".join(scrub(o)[:200] for o in self.outside[:3])
            more = f" and {len(self.outside) - 3} more" if len(self.outside) > 3 else ""
            notes.append(
                f"{self.shown}: {len(self.outside)} result(s) outside the project root were dropped: {shown}{more}"
            )
        return SarifImport(
            source=self.shown,
            tools=tuple(self.tools),
            results=tuple(self.results),
            notes=tuple(notes),
            skipped=dict(sorted(self.skipped.items())),
        )


class _RuleBook:
    """A run's rule descriptors, by id and by index (the driver's, then each extension's)."""

    def __init__(self, driver: Mapping[str, Any], extensions: Any) -> None:
        self.driver = _list(driver.get("rules"))
        self.components = [_list(_mapping(extension).get("rules")) for extension in _list(extensions)]
        self.by_id: dict[str, dict[str, Any]] = {}
        for rules in [self.driver, *self.components]:
            for rule in rules:
                if isinstance(rule, dict) and isinstance(rule.get("id"), str):
                    self.by_id.setdefault(rule["id"], rule)

    def find(self, result: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        """(rule id, descriptor) of ``result``: ``ruleId``, ``rule.id``, or the descriptor at ``ruleIndex``."""
        reference = _mapping(result.get("rule"))
        rule_id = result.get("ruleId") if isinstance(result.get("ruleId"), str) else reference.get("id")
        rules = self.driver
        component = _mapping(reference.get("toolComponent")).get("index")
        if isinstance(component, int) and 0 <= component < len(self.components):
            rules = self.components[component]
        index = result.get("ruleIndex", reference.get("index"))
        by_index = rules[index] if isinstance(index, int) and 0 <= index < len(rules) else None
        if not isinstance(rule_id, str) and isinstance(by_index, dict):
            rule_id = by_index.get("id")
        if not isinstance(rule_id, str) or not rule_id:
            return "unknown-rule", by_index if isinstance(by_index, dict) else {}
        # CodeQL's ruleId may add a suffix to the descriptor's id ("js/xss/0"): the id decides, then the index
        descriptor = self.by_id.get(rule_id) or (by_index if isinstance(by_index, dict) else {})
        return " ".join(rule_id.split())[:200], descriptor


def tool_slug(name: str) -> str:
    """``Semgrep OSS`` -> ``semgrep``; ``CodeQL`` -> ``codeql``; an unknown tool's name as a slug."""
    lowered = name.lower()
    for known in KNOWN_TOOLS:
        if known in lowered:
            return known
    return re.sub(r"[^a-z0-9]+", "-", lowered).strip("-")[:40] or "sarif"


def severity_of(level: str, security_severity: float | None) -> str:
    """SARIF level (error/warning/note/none) and security-severity score -> P0..P3."""
    if security_severity is not None and security_severity >= 9.0:
        return "P0"
    if security_severity is not None and security_severity >= 7.0:
        return "P1"
    return LEVEL_SEVERITY.get(level, "P2")


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _suppressed(value: Any) -> bool:
    """A suppression that was not rejected (status absent means accepted)."""
    if not isinstance(value, list):
        return False
    return any(isinstance(s, dict) and s.get("status", "accepted") == "accepted" for s in value)


def _place(result: Mapping[str, Any], artifacts: list[Any]) -> tuple[str, str | None, int] | None:
    """(uri, uriBaseId, start line) of the first location that names a file."""
    for location in _list(result.get("locations")):
        physical = _mapping(_mapping(location).get("physicalLocation"))
        artifact = _mapping(physical.get("artifactLocation"))
        index = artifact.get("index")
        if "uri" not in artifact and isinstance(index, int) and 0 <= index < len(artifacts):
            artifact = {**_mapping(_mapping(artifacts[index]).get("location")), **artifact}
        uri = artifact.get("uri")
        if not isinstance(uri, str) or not uri.strip():
            continue
        line = _mapping(physical.get("region")).get("startLine")
        base = artifact.get("uriBaseId")
        return uri, base if isinstance(base, str) else None, line if isinstance(line, int) and line >= 1 else 1
    return None


def _relative_to(path: Path | None, root: Path) -> str | None:
    if path is None:
        return None
    try:
        relative = path.relative_to(root)
    except ValueError:
        return None
    text = relative.as_posix()
    return None if text in ("", ".") else text


def _real(path: Path) -> Path | None:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return None


def _cwes(
    tags: list[str], rule: Mapping[str, Any], result: Mapping[str, Any], *properties: Mapping[str, Any]
) -> tuple[str, ...]:
    """Every CWE id the rule and the result name, ``CWE-89`` form, numeric order."""
    texts = list(tags)
    for bag in properties:
        texts += _strings(bag.get("cwe"))
    references = [_mapping(_mapping(r).get("target")) for r in _list(rule.get("relationships"))]
    references += [_mapping(t) for t in _list(result.get("taxa"))]
    for reference in references:
        component = _mapping(reference.get("toolComponent")).get("name")
        if isinstance(component, str) and component.upper() == "CWE" and reference.get("id") is not None:
            texts.append("CWE-" + str(reference["id"]).upper().removeprefix("CWE-"))
    numbers = {int(m.group(1)) for text in texts for m in _CWE.finditer(text)}
    return tuple(f"CWE-{n}" for n in sorted(numbers))


def _score(*values: Any) -> float | None:
    """The first security-severity that is a number from 0 to 10."""
    for value in values:
        try:
            score = float(value)
        except (TypeError, ValueError):
            continue
        if 0.0 <= score <= 10.0:
            return score
    return None


def _message(result: Mapping[str, Any], rule: Mapping[str, Any], rule_id: str) -> str:
    """The result's message (``text``, or ``id`` into the rule's messageStrings with its arguments), masked and
    folded to one bounded line; the rule's short description or its id when there is none."""
    message = _mapping(result.get("message"))
    text = message.get("text")
    if not isinstance(text, str) and isinstance(message.get("id"), str):
        template = _mapping(_mapping(rule.get("messageStrings")).get(message["id"])).get("text")
        if isinstance(template, str):
            arguments = _strings(message.get("arguments"))
            text = _PLACEHOLDER.sub(lambda m: arguments[int(m[1])] if int(m[1]) < len(arguments) else m[0], template)
    if not isinstance(text, str) or not text.strip():
        text = _mapping(rule.get("shortDescription")).get("text")
    if not isinstance(text, str) or not text.strip():
        text = rule_id
    folded = " ".join(scrub(text).split())
    return folded if len(folded) <= MAX_MESSAGE else folded[: MAX_MESSAGE - 1] + "…"
