"""Content routing (PROTOCOL.md 4.3): which part of the input each agent reads.

A big diff or a long document costs every agent the whole input, although
most of it is outside each agent's concern. So a diff of at least
``slicing.diff_min_lines`` changed lines, or a document of at least
``slicing.document_min_lines`` lines, is *sliced* per agent: the agent's
priority content in full, everything else as one-line ``[context]``
summaries it can ask for. Smaller inputs, single source files and
directories are never sliced: every agent reads one shared content file.

What is priority for an agent comes from its definition's ``routing`` and
``concerns``, matched with :mod:`fluxdrive.core.match` so a slice agrees with the
triage score that selected the agent:

- **diff** - a changed file whose path matches ``priority_globs`` or
  ``critical_globs``, or any of whose hunks holds one of ``hunk_keywords``.
  The unit is the file: a priority file is sent whole (all its hunks), so an
  agent never sees half a change. Binary, rename-only and mode-only changes
  have no hunks and can be priority by their path alone.
- **document** - a section (a heading and its body down to the next heading
  of any level) whose title holds one of ``section_keywords``, or whose text
  holds one of ``concerns`` or ``hunk_keywords``.

Hunk text is matched without the one-character diff markers (a removed
markdown bullet would otherwise read ``-- item`` and hit a ``--`` keyword),
with the hunk's section header (the enclosing function git names) included.

Overrides, in order:

1. Cross-cutting agents (``slicing.cross_cutting``, or ``routing.cross_cutting``
   in the definition) always get the full content.
2. An agent's ``routing.always_priority_keywords`` make any path, hunk or
   section that holds them priority. For ``fd-safety`` the built-in
   :data:`SAFETY_PATH_WORDS`, :data:`SAFETY_PATH_GLOBS` and
   :data:`SAFETY_TEXT_WORDS` join them: anything touching authentication,
   credentials, secrets, tokens or certificates is always priority for it.
   These words are matched as whole words after splitting identifiers, so
   ``api_key.py``, ``AuthService.java`` and ``access_token = ...`` count
   (paths split snake_case and camelCase; hunk and section text split
   snake_case only, which keeps the split position-preserving and cheap).
3. Priority covering at least ``slicing.full_coverage_ratio`` of the lines
   sends everything: the slice would save little and lose the surroundings.
4. An agent with no priority item gets everything (``fallback``), logged:
   the alternative, skipping it, would silently drop a reviewer triage chose.

**Decision (the preamble)**: the text before a document's first heading is
always sent in full, as a section titled ``(preamble)``: it usually carries
the title, status and summary that orient every other section, and it is
short. It counts toward the coverage ratio, but it is never a priority item
by itself, so an agent no heading section matches still falls back to the
full document.

Content files, all written atomically inside OUTPUT_DIR:

- ``input.diff`` - the whole diff, shared (written whenever it is missing or
  differs from the input, since a ``--staged`` run reuses its directory).
- ``content/<agent>.diff`` - the priority files' diffs verbatim, in path
  order, then ``[context] path: +N -M`` per other file, in path order.
- ``content/<agent>.md`` - the preamble and the priority sections verbatim
  with their headings, in document order, then a blank line and
  ``[context] ## Heading (N lines)`` per other section, in document order.
- ``content/files.md`` - for a directory: the reviewed files with their line
  counts, at most :data:`LISTING_LIMIT` entries (the rest counted).

Speed: a 5,000-file diff of 200,000 changed lines is parsed once, and each
agent pattern reads each file's hunks at most once. The patterns from
:mod:`fluxdrive.core.match` start with a look-behind, which stops Python's regex
engine from skipping ahead, so :class:`Finder` first finds the literal each
match must start with (a C-speed substring scan) and lets the pattern confirm
only there; likewise only globs whose literal part occurs in a path reach
``glob_match``.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from fluxdrive.agents.definition import NAME_PATTERN, AgentDefinition
from fluxdrive.config.model import SlicingConfig
from fluxdrive.contracts.run_manifest import SliceRecord
from fluxdrive.core.atomic import atomic_write_text
from fluxdrive.core.masking import scrub
from fluxdrive.core.match import Finder, Text, glob_match, keyword_pattern, word_pattern
from fluxdrive.errors import InputError
from fluxdrive.triage.profile import InputProfile, Section, document_sections
from fluxdrive.workspace import Target, write_input_copy

CONTENT_DIR = "content"
SHARED_DIFF = "input.diff"
LISTING_FILE = "files.md"
LISTING_LIMIT = 1_990
PREAMBLE = "(preamble)"
SAFETY_AGENT = "fd-safety"

SAFETY_PATH_WORDS = (
    "auth", "authn", "authz", "authentication", "authorization", "login", "logout", "signin", "session",
    "secret", "credential", "token", "key", "apikey", "keystore", "keychain", "cert", "certificate",
    "pem", "crt", "p12", "pfx", "password", "passwd", "oauth", "oauth2", "jwt", "sso", "vault", "tls", "ssl",
)  # fmt: skip
"""Path words that make a changed file priority for fd-safety (plurals included: ``keys/``, ``certs/``)."""

SAFETY_PATH_GLOBS = ("**/.env", "**/.env.*", "**/*.env", "**/.envrc")
"""Environment files: where secrets live, whatever the directory is called."""

SAFETY_TEXT_WORDS = (
    "auth", "authn", "authz", "authenticate", "authentication", "authorize", "authorization", "login",
    "logout", "session", "secret", "credential", "token", "password", "passwd", "passphrase",
    "api key", "apikey", "private key", "access key", "oauth", "oauth2", "jwt", "bearer", "certificate",
    "cert", "x509", "tls", "ssl",
)  # fmt: skip
"""Hunk and section words that make the hunk's file (or the section) priority for fd-safety."""

_NAME = re.compile(NAME_PATTERN)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NOT_WORD = re.compile(r"[^A-Za-z0-9]+")


# --------------------------------------------------------------------------
# the plan


@dataclass(frozen=True, slots=True)
class Slice:
    """What one agent reads, and why.

    ``files`` (diffs) and ``sections`` (documents) list what was sent in full
    when ``mode`` is ``"sliced"``; they are empty for ``"full"``, which covers
    everything. ``lines`` maps the document's project-relative path to the
    1-based line numbers sent in full (documents only; None when full), so a
    runtime can limit findings to what the agent saw; ``sections`` names each
    title once, so only ``lines`` tells two sections of one title apart. ``priority_lines``
    counts every line sent in full when the agent's priority was measured
    (the document preamble included); ``total_lines`` is the input's size in
    the same unit (changed lines for a diff, lines for a document).
    """

    agent: str
    mode: Literal["full", "sliced"]
    content_path: Path
    files: tuple[str, ...] = ()
    sections: tuple[str, ...] = ()
    lines: Mapping[str, frozenset[int]] | None = None
    reason: str = ""
    fallback: bool = False
    priority_lines: int = 0
    total_lines: int = 0

    def record(self) -> SliceRecord:
        """The ``slice`` entry of run.json: synthesis counts only agents that saw a finding's item."""
        return SliceRecord(mode=self.mode, files=list(self.files), sections=list(self.sections))


@dataclass(frozen=True, slots=True)
class ContentPlan:
    """Every agent's content for one run."""

    active: bool
    shared_path: Path
    slices: Mapping[str, Slice]
    log: tuple[str, ...]


def route_content(
    target: Target,
    profile: InputProfile,
    agents: Sequence[AgentDefinition],
    output_dir: Path,
    config: SlicingConfig,
) -> ContentPlan:
    """Decide and write what each agent reads (PROTOCOL.md 4.3).

    Writes the shared content file (``input.diff`` or, for a directory,
    ``content/files.md``) and one ``content/<agent>.diff|.md`` per sliced
    agent. Raises ValueError for two agents of one name or a name that is not
    a safe file name, InputError when the diff cannot be parsed.
    """
    output_dir = Path(output_dir)
    _check_names(agents)
    if target.kind == "diff":
        return _route_diff(target, profile, agents, output_dir, config)
    if target.kind == "document":
        return _route_document(target, profile, agents, output_dir, config)
    if target.kind == "directory":
        listing = _write_listing(profile, output_dir)
        why = f"content routing off: directories are not sliced; every agent reads {CONTENT_DIR}/{LISTING_FILE}"
        return _shared_plan(listing, agents, why, profile.total_lines)
    path = _target_path(target)
    return _shared_plan(path, agents, "content routing off: single source files are not sliced", profile.total_lines)


def may_slice(target_kind: str, profile: InputProfile, agent: AgentDefinition, config: SlicingConfig) -> bool:
    """Whether ``agent`` will likely get a slice rather than everything - for estimates made before routing.

    True for agents that are not cross-cutting when the input is a diff or a
    document long enough for content routing (the 80% rule may still send it all).
    """
    if _is_cross_cutting(agent, config):
        return False
    if target_kind == "diff":
        changed = profile.diff.changed if profile.diff is not None else profile.total_lines
        return changed >= config.diff_min_lines
    return target_kind == "document" and profile.total_lines >= config.document_min_lines


def _check_names(agents: Sequence[AgentDefinition]) -> None:
    seen: set[str] = set()
    for agent in agents:
        if not _NAME.match(agent.name):
            raise ValueError(f"agent name {agent.name!r} cannot name a content file")
        if agent.name in seen:
            raise ValueError(f"agent {agent.name!r} is listed twice")
        seen.add(agent.name)


def _target_path(target: Target) -> Path:
    if target.path is None:
        raise ValueError(f"a {target.kind} input needs a path")
    return Path(target.path)


def _shared_plan(path: Path, agents: Sequence[AgentDefinition], why: str, total: int) -> ContentPlan:
    reason = "shared content (slicing not active)"
    slices = {a.name: Slice(a.name, "full", path, reason=reason, total_lines=total) for a in agents}
    return ContentPlan(False, path, slices, (why, *(f"{a.name}: {reason}" for a in agents)))


def _is_cross_cutting(agent: AgentDefinition, config: SlicingConfig) -> bool:
    return agent.routing.cross_cutting or agent.name in config.cross_cutting


def _full(agent: str, path: Path, reason: str, *, fallback: bool = False, priority: int = 0, total: int) -> Slice:
    return Slice(agent, "full", path, reason=reason, fallback=fallback, priority_lines=priority, total_lines=total)


def _covers_all(priority: int, total: int, config: SlicingConfig) -> str | None:
    """The 80% rule's reason, when priority content already covers most of the input."""
    if total <= 0 or priority < total * config.full_coverage_ratio - 1e-9:
        return None
    share = math.floor(priority * 100 / total)
    return f"priority covers {share}% >= {config.full_coverage_ratio:.0%}: full content"


def _plural(count: int, word: str, many: str | None = None) -> str:
    return f"{count:,} {word if count == 1 else many or word + 's'}"


# --------------------------------------------------------------------------
# matching


def _identifier_words(path: str) -> str:
    """``src/AuthService/api_key.py`` -> ``src Auth Service api key py``: path parts as words."""
    return _NOT_WORD.sub(" ", _CAMEL.sub(" ", path))


def _glob_literal(glob: str) -> str:
    """The longest literal run of a glob: a path without it cannot match (``""`` when unsure)."""
    if "[" in glob:
        return ""
    return max((run.strip("/") for run in re.split(r"[*?]", glob)), key=len, default="")


@dataclass(frozen=True, slots=True)
class _Rules:
    """One agent's routing, compiled once."""

    globs: tuple[tuple[str, str], ...]
    path_words: Finder | None
    hunks: Finder | None
    text_words: Finder | None
    titles: Finder | None
    concerns: Finder | None

    @classmethod
    def of(cls, agent: AgentDefinition) -> _Rules:
        routing = agent.routing
        always = list(routing.always_priority_keywords)
        globs = [*routing.priority_globs, *routing.critical_globs]
        path_words, text_words = list(always), list(always)
        if agent.name == SAFETY_AGENT:
            globs += SAFETY_PATH_GLOBS
            path_words += SAFETY_PATH_WORDS
            text_words += SAFETY_TEXT_WORDS
        return cls(
            globs=tuple((_glob_literal(g), g) for g in dict.fromkeys(globs)),
            path_words=Finder.build(path_words, word_pattern),
            hunks=Finder.build(routing.hunk_keywords, keyword_pattern),
            text_words=Finder.build(text_words, word_pattern),
            titles=Finder.build(routing.section_keywords, keyword_pattern),
            concerns=Finder.build(agent.concerns, word_pattern),
        )

    def path_hit(self, path: str, words: Text) -> bool:
        """True when a changed file's path makes it priority.

        Only the globs whose literal part occurs in the path go to
        ``glob_match``: fifty globs over 5,000 paths are otherwise most of
        fd-safety's routing time.
        """
        candidates = [glob for literal, glob in self.globs if literal in path]
        if candidates and glob_match(path, candidates):
            return True
        return self.path_words is not None and self.path_words.found_in(words)


# --------------------------------------------------------------------------
# diffs


@dataclass(frozen=True, slots=True)
class _FileDiff:
    """One changed path: its verbatim diff, its counts and its hunk text for matching."""

    path: str
    added: int
    removed: int
    raw: str
    text: Text
    words: Text
    path_words: Text

    @property
    def changed(self) -> int:
        return self.added + self.removed


def _parse_diff(diff_text: str) -> list[_FileDiff]:
    """The diff's files in path order (one entry per path, blocks of a repeated path joined)."""
    from unidiff.errors import UnidiffParseError
    from unidiff.patch import PatchSet

    source = diff_text.splitlines(keepends=True)
    try:
        patch = PatchSet(source)
    except UnidiffParseError as exc:
        raise InputError(f"the diff cannot be parsed: {exc}", hint="pass a unified diff (git diff output)") from None
    grouped: dict[str, list[tuple[str, int, int, str]]] = {}
    for patched, raw in zip(patch, _verbatim_blocks(source, [str(p) for p in patch]), strict=True):
        parts = [f"{hunk.section_header}\n" + "".join(line.value for line in hunk) for hunk in patched]
        grouped.setdefault(patched.path, []).append((raw, patched.added, patched.removed, "".join(parts)))
    files = []
    for path in sorted(grouped):
        blocks = grouped[path]
        raw = "".join(b[0] if b[0].endswith("\n") else b[0] + "\n" for b in blocks)
        text = "\n".join(b[3] for b in blocks)
        files.append(
            _FileDiff(
                path,
                sum(b[1] for b in blocks),
                sum(b[2] for b in blocks),
                raw,
                Text.of(text),
                Text.of(text.replace("_", " ")),
                Text.of(_identifier_words(path)),
            )
        )
    return files


def _verbatim_blocks(source: list[str], rendered: list[str]) -> list[str]:
    """Each file's diff as the input wrote it, when unidiff's blocks line up with the input.

    unidiff re-renders what it parsed (``@@ -0,0 +1 @@`` comes back as
    ``+1,1``) but keeps one output line per input line; when the line counts
    and every block's first line agree, the input's own lines are sent.
    """
    counts = [block.count("\n") + (0 if block.endswith("\n") else 1) for block in rendered]
    starts = list(itertools.accumulate(counts, initial=0))
    if starts[-1] != len(source) or any(
        source[start].rstrip("\r\n") != block.partition("\n")[0].rstrip("\r")
        for start, block in zip(starts[:-1], rendered, strict=True)
    ):
        return rendered
    return ["".join(source[start:end]) for start, end in itertools.pairwise(starts)]


class _DiffIndex:
    """The parsed diff, and which of its files an agent's rules make priority."""

    def __init__(self, files: list[_FileDiff]) -> None:
        self.files = files
        self.total = sum(f.changed for f in files)

    def priority(self, rules: _Rules) -> list[int]:
        """Indexes (path order) of the files that are priority under ``rules``.

        Each check runs only on the files no earlier check took, so every
        pattern reads each file's hunks at most once.
        """
        rest = [i for i, f in enumerate(self.files) if not rules.path_hit(f.path, f.path_words)]
        if rules.hunks is not None:
            rest = [i for i in rest if not rules.hunks.found_in(self.files[i].text)]
        if rules.text_words is not None:
            rest = [i for i in rest if not rules.text_words.found_in(self.files[i].words)]
        left = set(rest)
        return [i for i in range(len(self.files)) if i not in left]


def _route_diff(
    target: Target, profile: InputProfile, agents: Sequence[AgentDefinition], output_dir: Path, config: SlicingConfig
) -> ContentPlan:
    if target.diff_text is None:
        raise ValueError("a diff input needs its diff text")
    shared = _write_shared_diff(output_dir, target)
    changed = profile.diff.changed if profile.diff is not None else profile.total_lines
    if changed < config.diff_min_lines:
        why = f"content routing off: diff of {changed:,} changed lines < {config.diff_min_lines:,}"
        return _shared_plan(shared, agents, why, changed)
    index = _DiffIndex(_parse_diff(target.diff_text))
    log = [f"content routing on: diff of {changed:,} changed lines >= {config.diff_min_lines:,}"]
    slices: dict[str, Slice] = {}
    for agent in agents:
        slices[agent.name] = _diff_slice(agent, index, shared, output_dir, config)
        log.append(f"{agent.name}: {slices[agent.name].reason}")
    return ContentPlan(True, shared, slices, tuple(log))


def _write_shared_diff(output_dir: Path, target: Target) -> Path:
    """``input.diff``, rewritten only when missing or different (a rerun on the same directory)."""
    path = output_dir / SHARED_DIFF
    try:
        current = path.read_bytes()
    except OSError:
        current = None
    if current != scrub(target.diff_text or "", detect=True).encode("utf-8"):
        write_input_copy(output_dir, target)
    return path


def _diff_slice(
    agent: AgentDefinition, index: _DiffIndex, shared: Path, output_dir: Path, config: SlicingConfig
) -> Slice:
    name, total = agent.name, index.total
    if _is_cross_cutting(agent, config):
        return _full(name, shared, "cross-cutting: full content", total=total)
    chosen = index.priority(_Rules.of(agent))
    if not chosen:
        return _full(name, shared, "no priority content: full content (fallback)", fallback=True, total=total)
    priority = sum(index.files[i].changed for i in chosen)
    covered = _covers_all(priority, total, config)
    if covered is not None:
        return _full(name, shared, covered, priority=priority, total=total)
    path = output_dir / CONTENT_DIR / f"{name}.diff"
    atomic_write_text(path, scrub(_render_diff_slice(index.files, set(chosen)), detect=True))
    files = tuple(index.files[i].path for i in chosen)
    reason = f"sliced: {len(files):,} of {_plural(len(index.files), 'file')} ({priority:,} of {total:,} changed lines)"
    return Slice(name, "sliced", path, files=files, reason=reason, priority_lines=priority, total_lines=total)


def _render_diff_slice(files: Sequence[_FileDiff], chosen: set[int]) -> str:
    """Priority files' diffs verbatim, then ``[context] path: +N -M`` for every other file."""
    parts = [f.raw for i, f in enumerate(files) if i in chosen]
    parts += [f"[context] {f.path}: +{f.added} -{f.removed}\n" for i, f in enumerate(files) if i not in chosen]
    return "".join(parts)


# --------------------------------------------------------------------------
# documents


@dataclass(frozen=True, slots=True)
class _Part:
    """A section of the document: lines ``start``..``end`` (1-based, inclusive)."""

    title: str
    level: int
    start: int
    end: int
    text: Text
    words: Text
    heading: Text

    @property
    def size(self) -> int:
        return self.end - self.start + 1


@dataclass(frozen=True, slots=True)
class _Document:
    """The document being sliced, read once."""

    relative: str
    path: Path
    lines: list[str]
    preamble: _Part | None
    parts: list[_Part]


def _document_parts(lines: list[str], sections: Sequence[Section]) -> tuple[_Part | None, list[_Part]]:
    """The preamble (None when blank) and one part per heading, each down to the next heading."""
    starts = [s.line for s in sections]
    ends = [n - 1 for n in starts[1:]] + ([len(lines)] if starts else [])

    def part(title: str, level: int, start: int, end: int) -> _Part:
        body = "\n".join(lines[start - 1 : end])
        return _Part(title, level, start, end, Text.of(body), Text.of(body.replace("_", " ")), Text.of(title))

    first = starts[0] if starts else len(lines) + 1
    preamble = None
    if any(line.strip() for line in lines[: first - 1]):
        preamble = part(PREAMBLE, 0, 1, first - 1)
    return preamble, [part(s.title, s.level, a, b) for s, a, b in zip(sections, starts, ends, strict=True)]


def _sections_for(profile: InputProfile, text: str, lines: list[str]) -> list[Section]:
    """The profile's heading tree, re-read when the file changed since triage measured it."""
    sections = profile.sections
    consistent = all(0 < s.line <= len(lines) and lines[s.line - 1].lstrip().startswith("#") for s in sections)
    if consistent and (sections or not any(line.lstrip().startswith("#") for line in lines)):
        return list(sections)
    return document_sections(text)[0]


def _section_hit(rules: _Rules, part: _Part) -> bool:
    if rules.titles is not None and rules.titles.found_in(part.heading):
        return True
    if rules.concerns is not None and rules.concerns.found_in(part.text):
        return True
    if rules.hunks is not None and rules.hunks.found_in(part.text):
        return True
    return rules.text_words is not None and rules.text_words.found_in(part.words)


def _relative_path(target: Target, profile: InputProfile, path: Path) -> str:
    if profile.path:
        return profile.path
    try:
        return path.resolve().relative_to(Path(target.root).resolve()).as_posix()
    except ValueError:
        return path.name


def _route_document(
    target: Target, profile: InputProfile, agents: Sequence[AgentDefinition], output_dir: Path, config: SlicingConfig
) -> ContentPlan:
    path = _target_path(target)
    if profile.total_lines < config.document_min_lines:
        why = f"content routing off: document of {profile.total_lines:,} lines < {config.document_min_lines:,}"
        return _shared_plan(path, agents, why, profile.total_lines)
    text = path.read_bytes().decode("utf-8", errors="replace")
    lines = text.splitlines()
    preamble, parts = _document_parts(lines, _sections_for(profile, text, lines))
    document = _Document(_relative_path(target, profile, path), path, lines, preamble, parts)
    log = [f"content routing on: document of {len(lines):,} lines >= {config.document_min_lines:,}"]
    slices: dict[str, Slice] = {}
    for agent in agents:
        slices[agent.name] = _document_slice(agent, document, output_dir, config)
        log.append(f"{agent.name}: {slices[agent.name].reason}")
    return ContentPlan(True, path, slices, tuple(log))


def _document_slice(agent: AgentDefinition, doc: _Document, output_dir: Path, config: SlicingConfig) -> Slice:
    name, total = agent.name, len(doc.lines)
    if _is_cross_cutting(agent, config):
        return _full(name, doc.path, "cross-cutting: full content", total=total)
    if not doc.parts:
        return _full(name, doc.path, "no headings to slice by: full content (fallback)", fallback=True, total=total)
    rules = _Rules.of(agent)
    chosen = [p for p in doc.parts if _section_hit(rules, p)]
    if not chosen:
        return _full(name, doc.path, "no priority content: full content (fallback)", fallback=True, total=total)
    starts = {p.start for p in chosen}
    sent = ([doc.preamble] if doc.preamble is not None else []) + chosen
    priority = sum(p.size for p in sent)
    covered = _covers_all(priority, total, config)
    if covered is not None:
        return _full(name, doc.path, covered, priority=priority, total=total)
    path = output_dir / CONTENT_DIR / f"{name}.md"
    rendered = _render_document_slice(doc.lines, sent, [p for p in doc.parts if p.start not in starts])
    atomic_write_text(path, scrub(rendered, detect=True))
    numbers = frozenset(n for p in sent for n in range(p.start, p.end + 1))
    titles = tuple(dict.fromkeys(p.title for p in sent))
    reason = f"sliced: {len(chosen):,} of {_plural(len(doc.parts), 'section')} ({priority:,} of {total:,} lines)"
    return Slice(
        name, "sliced", path, sections=titles, lines={doc.relative: numbers}, reason=reason,
        priority_lines=priority, total_lines=total,
    )  # fmt: skip


def _render_document_slice(lines: Sequence[str], sent: Sequence[_Part], context: Sequence[_Part]) -> str:
    """The sent sections verbatim (document order), a blank line, ``[context] ## Title (N lines)`` per other."""
    body = [line for part in sorted(sent, key=lambda p: p.start) for line in lines[part.start - 1 : part.end]]
    text = "\n".join(body) + "\n"
    if context:
        listed = [f"[context] {'#' * p.level} {p.title} ({_plural(p.size, 'line')})" for p in context]
        text += "\n" + "\n".join(listed) + "\n"
    return text


# --------------------------------------------------------------------------
# directories


def _write_listing(profile: InputProfile, output_dir: Path) -> Path:
    """``content/files.md``: the reviewed files and their line counts, bounded."""
    per_file: dict[str, int] = {}
    for unit in profile.units:
        if unit.file is not None:
            per_file[unit.file] = per_file.get(unit.file, 0) + unit.weight
    names = sorted(per_file)
    shown = names[:LISTING_LIMIT]
    out = [
        f"# Files under review: {profile.label}",
        "",
        f"{_plural(profile.file_count, 'file')}, {_plural(profile.total_lines, 'line')}.",
    ]
    if len(per_file) < profile.file_count:
        out.append(
            "The directory is large: triage grouped neighbouring files, so each entry below"
            " stands for the named file and the files after it, up to the next entry."
        )
    out.append("")
    out += [f"- {name} ({_plural(per_file[name], 'line')})" for name in shown]
    left = names[LISTING_LIMIT:]
    if left:
        rest = sum(per_file[n] for n in left)
        more = (
            _plural(len(left), "more file")
            if len(per_file) == profile.file_count
            else _plural(len(left), "more entry", "more entries")
        )
        out.append(f"- … and {more} ({_plural(rest, 'line')}) not listed")
    path = output_dir / CONTENT_DIR / LISTING_FILE
    atomic_write_text(path, scrub("\n".join(out) + "\n"))
    return path
