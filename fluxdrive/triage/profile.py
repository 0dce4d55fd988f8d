"""The input profile (PROTOCOL.md 2.3): what is being reviewed, measured.

Languages (extension, then shebang), line counts, frameworks (manifests and
imports), for documents the heading tree with prose-line and bullet counts
and a thin / adequate / deep label per section, for diffs the unidiff stats,
a complexity label, and what the project's manifests claim against the files
actually present.

The profile also carries the *units* that base scores are computed from: a
document's sections, a directory's files, a diff's hunks, or a single file's
chunks. Each unit has a weight (lines) and the text triage matches the
agents' concerns against. Big files are read in a streaming pass and
contribute bounded text, so a 50 MB input costs one read.

Section labels. **Decision**: the spec's table ("thin: < 5 lines of prose
or < 3 bullets") is read per content type: a section is *deep* with 30+
prose lines or 10+ bullets, *adequate* with 5+ lines or 3+ bullets, else
*thin*.
"""

from __future__ import annotations

import json
import re
import sys
import tomllib
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

from fluxdrive.core.confine import read_confined
from fluxdrive.core.walk import SKIPPED_DIRS
from fluxdrive.errors import FluxdriveError
from fluxdrive.workspace import Target, review_files

UNIT_TEXT_LIMIT = 16_384
MAX_UNITS = 2_000
CHUNK_LINES = 40
MAX_MANIFEST_BYTES = 5_000_000

LANGUAGES = {
    ".py": "python", ".pyi": "python", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript",
    ".jsx": "javascript", ".ts": "typescript", ".tsx": "typescript", ".go": "go", ".rs": "rust",
    ".java": "java", ".kt": "kotlin", ".rb": "ruby", ".php": "php", ".c": "c", ".h": "c", ".cc": "cpp",
    ".cpp": "cpp", ".hpp": "cpp", ".cs": "csharp", ".swift": "swift", ".scala": "scala", ".lua": "lua",
    ".sh": "shell", ".bash": "shell", ".sql": "sql", ".gd": "gdscript", ".dart": "dart", ".svelte": "svelte",
    ".vue": "vue", ".md": "markdown", ".markdown": "markdown", ".rst": "rst", ".txt": "text",
    ".yml": "yaml", ".yaml": "yaml", ".toml": "toml", ".json": "json", ".html": "html", ".css": "css",
}  # fmt: skip
CODE_LANGUAGES = {
    "python", "javascript", "typescript", "go", "rust", "java", "kotlin", "ruby", "php", "c", "cpp", "csharp",
    "swift", "scala", "lua", "shell", "sql", "gdscript", "dart", "svelte", "vue",
}  # fmt: skip
MANIFEST_LANGUAGES = {
    "package.json": {"javascript", "typescript"}, "pyproject.toml": {"python"}, "setup.py": {"python"},
    "requirements.txt": {"python"}, "Pipfile": {"python"}, "Cargo.toml": {"rust"}, "go.mod": {"go"},
    "Gemfile": {"ruby"}, "pom.xml": {"java", "kotlin"}, "build.gradle": {"java", "kotlin"},
    "composer.json": {"php"}, "pubspec.yaml": {"dart"},
}  # fmt: skip
# Game engines keep no package manifest; their project file names the engine.
ENGINE_MARKERS = {"project.godot": "godot", "*.uproject": "unreal", "ProjectSettings/ProjectVersion.txt": "unity"}
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+\S")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})\s*([\w+#.-]*)")
# Fenced blocks that hold prose or pictures, not code: a section with only these stays prose.
PROSE_FENCES = frozenset({"", "text", "txt", "plain", "markdown", "md", "mermaid", "console", "output", "log"})
_SHEBANG = re.compile(r"^#!.*\b(python\d?|node|bash|sh|ruby|perl)\b")
_PY_IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import|import\s+([\w.]+))", re.M)
_JS_IMPORT = re.compile(r"""(?:from\s+|require\(\s*)["']([@\w][\w./@-]*)["']""")


@dataclass(frozen=True, slots=True)
class Unit:
    """A piece of the input that base scores count: its weight, text and file."""

    name: str
    weight: int
    text: str
    file: str | None = None
    section: str | None = None
    code: bool = False


@dataclass
class Section:
    """One heading of a document with its own content's size."""

    title: str
    level: int
    line: int
    prose_lines: int = 0
    bullets: int = 0
    label: str = "thin"


@dataclass
class DiffStats:
    """What a unified diff changes."""

    files: int = 0
    hunks: int = 0
    added: int = 0
    removed: int = 0
    new: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    renamed: list[str] = field(default_factory=list)
    binary: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)

    @property
    def changed(self) -> int:
        return self.added + self.removed


@dataclass
class ProjectFacts:
    """Manifests, claimed versus present languages, and project docs."""

    manifests: list[str] = field(default_factory=list)
    dependencies: list[str] = field(default_factory=list)
    claimed_languages: list[str] = field(default_factory=list)
    present_languages: list[str] = field(default_factory=list)
    divergences: list[str] = field(default_factory=list)
    has_claude_md: bool = False
    has_agents_md: bool = False
    has_fluxdrive_config: bool = False

    @property
    def has_project_docs(self) -> bool:
        """CLAUDE.md, AGENTS.md or our own .fluxdrive/ config (the project bonus)."""
        return self.has_claude_md or self.has_agents_md or self.has_fluxdrive_config


@dataclass
class InputProfile:
    """Everything triage knows about the input before any agent runs."""

    kind: str
    label: str
    path: str | None
    root: str
    languages: dict[str, int] = field(default_factory=dict)
    total_lines: int = 0
    file_count: int = 0
    mixed_languages: bool = False
    frameworks: list[str] = field(default_factory=list)
    document_type: str | None = None
    sections: list[Section] = field(default_factory=list)
    diff: DiffStats | None = None
    complexity: str = "small"
    project: ProjectFacts = field(default_factory=ProjectFacts)
    notes: list[str] = field(default_factory=list)
    units: list[Unit] = field(default_factory=list, repr=False)

    def to_json(self) -> dict[str, Any]:
        """``input-profile.json`` (units are internal and left out)."""
        data = asdict(self)
        data.pop("units")
        return {"schema_version": 1, **data}

    def thin_sections(self) -> list[Section]:
        """Sections whose label is thin."""
        return [s for s in self.sections if s.label == "thin"]


def language_of(path: str, first_line: str = "") -> str | None:
    """Language from the extension, else the shebang."""
    language = LANGUAGES.get(PurePosixPath(path).suffix.lower())
    if language is None and first_line.startswith("#!"):
        match = _SHEBANG.match(first_line)
        if match:
            interpreter = match.group(1)
            return {"node": "javascript", "bash": "shell", "sh": "shell"}.get(
                interpreter, re.sub(r"\d", "", interpreter)
            )
    return language


def _label(prose: int, bullets: int) -> str:
    if prose >= 30 or bullets >= 10:
        return "deep"
    if prose >= 5 or bullets >= 3:
        return "adequate"
    return "thin"


def document_sections(text: str) -> tuple[list[Section], list[Unit]]:
    """The heading tree with counts, and one unit per section (heading + body)."""
    sections: list[Section] = []
    bodies: list[list[str]] = [[]]
    titles: list[str] = [""]
    coded: list[bool] = [False]  # per body: holds a fenced code block (```python, ```go, ```yaml ...)
    fence = None
    for number, line in enumerate(text.splitlines(), start=1):
        marker = _FENCE.match(line)
        if marker and (fence is None or marker.group(1).startswith(fence)):
            if fence is None and marker.group(2).lower() not in PROSE_FENCES:
                coded[-1] = True
            fence = None if fence else marker.group(1)[:3]
        heading = _HEADING.match(line) if fence is None and not marker else None
        if heading:
            sections.append(Section(heading.group(2).strip(), len(heading.group(1)), number))
            bodies.append([line])
            titles.append(heading.group(2).strip())
            coded.append(False)
            continue
        bodies[-1].append(line)
        if fence is not None or marker or not line.strip() or not sections:
            continue
        if _BULLET.match(line):
            sections[-1].bullets += 1
        else:
            sections[-1].prose_lines += 1
    for section in sections:
        section.label = _label(section.prose_lines, section.bullets)
    units = [
        Unit(
            name=title or "(preamble)",
            weight=max(len(body), 1),
            text="\n".join(body)[:UNIT_TEXT_LIMIT],
            section=title or None,
            code=code,  # a code document's routing keywords (``execute(``, ``shell=True``) count as in a file
        )
        for title, body, code in zip(titles, bodies, coded, strict=True)
        if any(line.strip() for line in body)
    ]
    return sections, units


def document_type(path: str | None, text_head: str) -> str:
    """plan / brainstorm / prd / spec / readme / other, from the name and the title."""
    name = (PurePosixPath(path).name.lower() if path else "") + " " + text_head[:300].lower()
    for kind, words in (
        ("readme", ("readme",)),
        ("prd", ("prd", "product requirement")),
        ("brainstorm", ("brainstorm",)),
        ("spec", ("spec", "specification", "api reference", "rfc")),
        ("plan", ("plan", "design", "proposal", "roadmap", "migration")),
    ):
        if any(re.search(rf"\b{re.escape(w)}", name) for w in words):
            return kind
    return "other"


def _stream_file(path: Path) -> Iterator[list[str]]:
    """Chunks of lines from a file of any size, decoded forgivingly."""
    chunk: list[str] = []
    with path.open("rb") as handle:
        for raw in handle:
            chunk.append(raw.decode("utf-8", errors="replace").rstrip("\r\n"))
            if len(chunk) >= CHUNK_LINES:
                yield chunk
                chunk = []
    if chunk:
        yield chunk


def _single_file(profile: InputProfile, path: Path, relative: str) -> None:
    first = ""
    units: list[Unit] = []
    lines = 0
    for index, chunk in enumerate(_stream_file(path)):
        first = first or (chunk[0] if chunk else "")
        lines += len(chunk)
        units.append(
            Unit(
                f"{relative}:{index * CHUNK_LINES + 1}",
                len(chunk),
                "\n".join(chunk)[:UNIT_TEXT_LIMIT],
                relative,
                code=True,
            )
        )
    profile.total_lines = lines
    profile.file_count = 1
    language = language_of(relative, first)
    if language:
        profile.languages = {language: lines}
    profile.units = _bounded(units)


def _bounded(units: list[Unit]) -> list[Unit]:
    """Merge neighbouring units so a huge input keeps at most MAX_UNITS."""
    if len(units) <= MAX_UNITS:
        return units
    size = -(-len(units) // MAX_UNITS)
    merged = []
    for start in range(0, len(units), size):
        group = units[start : start + size]
        text = "\n".join(u.text for u in group)[:UNIT_TEXT_LIMIT]
        merged.append(
            Unit(group[0].name, sum(u.weight for u in group), text, group[0].file, group[0].section, group[0].code)
        )
    return merged


def _directory(profile: InputProfile, target: Target, max_file_bytes: int | None) -> None:
    """Units per file; a file too large to be analyzed (``static.max_file_bytes``) is left out of the weights,
    or one generated 6 MB module would drown every other file's signal and crowd agents out of the plan."""
    assert target.path is not None
    root = Path(target.root)
    files = target.files or review_files(target.path, root)
    counts: Counter[str] = Counter()
    units: list[Unit] = []
    imports: set[str] = set()
    for relative in files:
        path = root / relative
        try:
            if max_file_bytes is not None and path.stat().st_size > max_file_bytes:
                continue
            with path.open("rb") as handle:
                head = handle.read(UNIT_TEXT_LIMIT)
                lines = head.count(b"\n") + _count_newlines(handle)
        except OSError:
            profile.notes.append(f"skipped unreadable file {relative}")
            continue
        if b"\x00" in head[:8192]:
            continue
        text = head.decode("utf-8", errors="replace")
        language = language_of(relative, text.split("\n", 1)[0])
        if language:
            counts[language] += lines
        imports |= _imports(language, text)
        profile.total_lines += lines
        units.append(Unit(relative, max(lines, 1), f"{relative}\n{text}", relative, code=language in CODE_LANGUAGES))
    profile.file_count = len(units)
    profile.languages = dict(sorted(counts.items(), key=lambda i: (-i[1], i[0])))
    code = [lang for lang in profile.languages if lang in CODE_LANGUAGES]
    profile.mixed_languages = len(code) > 1
    profile.frameworks = sorted(imports)
    profile.units = _bounded(units)


NODE_BUILTINS = {
    "fs",
    "path",
    "os",
    "http",
    "https",
    "crypto",
    "child_process",
    "url",
    "util",
    "events",
    "stream",
    "net",
}


def _imports(language: str | None, text: str) -> set[str]:
    """Third-party modules a file imports (standard libraries left out)."""
    if language == "python":
        names = {(m.group(1) or m.group(2)).split(".")[0].lower() for m in _PY_IMPORT.finditer(text)}
        return names - set(sys.stdlib_module_names)
    if language in ("javascript", "typescript"):
        names = {m.group(1).lower() for m in _JS_IMPORT.finditer(text) if not m.group(1).startswith(".")}
        return {n for n in names if n.removeprefix("node:") not in NODE_BUILTINS}
    return set()


def _count_newlines(handle: BinaryIO) -> int:
    """Count the rest of a file's lines in 1 MiB chunks, so huge files never sit in memory."""
    total = 0
    while chunk := handle.read(1 << 20):
        total += chunk.count(b"\n")
    return total


def _diff(profile: InputProfile, text: str) -> None:
    from unidiff.errors import UnidiffParseError
    from unidiff.patch import PatchSet

    try:
        patch = PatchSet(text.splitlines(keepends=True))
    except UnidiffParseError as exc:
        from fluxdrive.errors import InputError

        raise InputError(f"the diff cannot be parsed: {exc}", hint="pass a unified diff (git diff output)") from None
    stats = DiffStats()
    units: list[Unit] = []
    counts: Counter[str] = Counter()
    for patched in patch:
        path = patched.path
        stats.files += 1
        stats.paths.append(path)
        if patched.is_binary_file:
            stats.binary.append(path)
        if patched.is_added_file:
            stats.new.append(path)
        elif patched.is_removed_file:
            stats.deleted.append(path)
        elif patched.is_rename:
            stats.renamed.append(path)
        language = language_of(path)
        for hunk in patched:
            stats.hunks += 1
            stats.added += hunk.added
            stats.removed += hunk.removed
            if language:
                counts[language] += hunk.added + hunk.removed
            body = "".join(str(line) for line in hunk)
            units.append(
                Unit(
                    f"{path}:{hunk.target_start}",
                    max(hunk.added + hunk.removed, 1),
                    f"{path}\n{hunk.section_header}\n{body}"[:UNIT_TEXT_LIMIT],
                    path,
                    code=language in CODE_LANGUAGES,
                )
            )
        if not len(patched):
            units.append(Unit(path, 1, path, path, code=False))
    if stats.files == 0:
        from fluxdrive.errors import InputError

        raise InputError("the diff has no file changes", hint="pass a unified diff (git diff output)")
    profile.diff = stats
    profile.total_lines = stats.changed
    profile.file_count = stats.files
    profile.languages = dict(sorted(counts.items(), key=lambda i: (-i[1], i[0])))
    profile.units = _bounded(units)


def _complexity(profile: InputProfile) -> str:
    if profile.diff is not None:
        changed = profile.diff.changed
        return "small" if changed < 200 else "large" if changed >= 1000 else "medium"
    if profile.kind == "directory":
        return "small" if profile.total_lines < 2_000 else "large" if profile.total_lines >= 20_000 else "medium"
    return "small" if profile.total_lines < 100 else "large" if profile.total_lines >= 400 else "medium"


def _manifest_dependencies(root: Path, name: str) -> list[str]:
    try:
        text = read_confined(root / name, root, "manifest", limit=MAX_MANIFEST_BYTES).decode("utf-8", errors="replace")
    except (OSError, FluxdriveError):  # a manifest linked out of the project, a FIFO, a huge file: no signal
        return []
    deps: list[str] = []
    try:
        if name == "package.json":
            data = json.loads(text)
            for key in ("dependencies", "devDependencies"):
                deps += list((data.get(key) or {}).keys())
        elif name in ("pyproject.toml", "Cargo.toml"):
            data = tomllib.loads(text)
            if name == "pyproject.toml":
                project = data.get("project", {})
                deps += [re.split(r"[<>=!~;\[ ]", d, maxsplit=1)[0] for d in project.get("dependencies", [])]
                for extra in project.get("optional-dependencies", {}).values():
                    deps += [re.split(r"[<>=!~;\[ ]", d, maxsplit=1)[0] for d in extra]
                deps += list(data.get("tool", {}).get("poetry", {}).get("dependencies", {}).keys())
            else:
                deps += list(data.get("dependencies", {}).keys()) + list(data.get("dev-dependencies", {}).keys())
        elif name == "go.mod":
            deps += re.findall(r"^\s*(?:require\s+)?([\w.-]+\.[\w./-]+)\s+v", text, re.M)
        elif name.startswith("requirements"):
            deps += [
                re.split(r"[<>=!~;\[ ]", line.strip(), maxsplit=1)[0]
                for line in text.splitlines()
                if line.strip() and not line.startswith(("#", "-"))
            ]
        elif name == "Gemfile":
            deps += re.findall(r"""^\s*gem\s+["']([\w-]+)""", text, re.M)
    except (ValueError, tomllib.TOMLDecodeError, AttributeError, RecursionError, TypeError):
        return []
    return [d.strip().lower() for d in deps if d.strip()]


def project_facts(root: Path) -> ProjectFacts:
    """Manifests and docs at the root, and the languages present two levels deep."""
    root = Path(root)
    facts = ProjectFacts()
    manifests = sorted(
        {n for n in MANIFEST_LANGUAGES if (root / n).is_file()} | {p.name for p in root.glob("requirements*.txt")}
    )
    facts.manifests = manifests
    claimed: set[str] = set()
    dependencies: set[str] = set()
    for name in manifests:
        claimed |= MANIFEST_LANGUAGES.get(name, {"python"})
        dependencies |= set(_manifest_dependencies(root, name))
    dependencies |= {engine for marker, engine in ENGINE_MARKERS.items() if any(root.glob(marker))}
    facts.dependencies = sorted(dependencies)
    present: set[str] = set()
    for path in _shallow_files(root):
        language = language_of(path.name)
        if language in CODE_LANGUAGES:
            present.add(language)
    facts.claimed_languages = sorted(claimed)
    facts.present_languages = sorted(present)
    for name in manifests:
        wanted = MANIFEST_LANGUAGES.get(name, {"python"})
        if not wanted & present:
            facts.divergences.append(f"{name} claims {'/'.join(sorted(wanted))} but no such files are present")
    facts.has_claude_md = (root / "CLAUDE.md").is_file()
    facts.has_agents_md = (root / "AGENTS.md").is_file()
    # Our own cache in .fluxdrive/ does not count: only context a person wrote.
    facts.has_fluxdrive_config = (root / ".fluxdrive" / "config.toml").is_file() or (
        root / ".fluxdrive" / "agents"
    ).is_dir()
    return facts


_SHALLOW_SKIPPED = SKIPPED_DIRS | {"vendor"}


def _shallow_files(root: Path, depth: int = 3, limit: int = 5_000) -> Iterator[Path]:
    """Files up to ``depth`` levels below the root (bounded; skips hidden entries, the directories every walk
    skips and vendored code, which says nothing about the project's own languages)."""
    stack = [(root, 0)]
    seen = 0
    while stack:
        directory, level = stack.pop()
        try:
            entries = sorted(directory.iterdir())
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith(".") or entry.name in _SHALLOW_SKIPPED:
                continue
            if entry.is_dir() and level + 1 < depth:
                stack.append((entry, level + 1))
            elif entry.is_file():
                seen += 1
                if seen > limit:
                    return
                yield entry


def build_profile(target: Target, *, max_file_bytes: int | None = None) -> InputProfile:
    """Profile the input and cut it into scoring units (files over ``max_file_bytes`` carry no weight)."""
    relative = None
    if target.path is not None:
        try:
            relative = target.path.resolve().relative_to(Path(target.root).resolve()).as_posix()
        except ValueError:
            relative = target.path.name
    profile = InputProfile(kind=target.kind, label=target.label, path=relative, root=str(target.root))
    if target.kind == "diff":
        _diff(profile, target.diff_text or "")
    elif target.kind == "directory":
        _directory(profile, target, max_file_bytes)
    elif target.kind == "document":
        assert target.path is not None
        text = target.path.read_bytes().decode("utf-8", errors="replace")
        profile.sections, profile.units = document_sections(text)
        profile.total_lines = text.count("\n") + (0 if text.endswith("\n") else 1)
        profile.file_count = 1
        profile.languages = {language_of(target.path.name) or "text": profile.total_lines}
        profile.document_type = document_type(relative, text)
    else:
        assert target.path is not None
        _single_file(profile, target.path, relative or target.path.name)
    profile.project = project_facts(Path(target.root))
    profile.frameworks = sorted(set(profile.frameworks) | set(profile.project.dependencies))
    profile.complexity = _complexity(profile)
    return profile
