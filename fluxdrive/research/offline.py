"""Offline answers to a free research question, from the project itself.

Three agents do real work without the web or a model:

- ``repo-research`` searches the files under the scope for the question's
  terms (:func:`fluxdrive.research.query.terms`). Definitions whose names
  carry a term (``def retry_after``, ``class BackoffTransport``) weigh most,
  then identifiers and words in code, then prose; the answer cites the best
  definitions by ``path:line`` with their first docstring line, the tests
  that name them, and the documentation and configuration that mention the
  terms. It is an extractive answer: every sentence points at a line.
- ``git-history`` finds the commits whose message or diff carries the
  terms (``git log --grep`` and ``-G``, limited to the scope), newest first,
  with the files they touched.
- ``learnings`` searches the knowledge store's entries and the project's
  solution notes (``docs/solutions/``, postmortems, ADRs) by title and text.

Each returns a :class:`~fluxdrive.launch.research.model.ResearchAnswer`
whose sources are files, ``path:line`` anchors and commit ids. Nothing is
read outside the project root; every git call is bounded by the deadline.
"""

from __future__ import annotations

import ast
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from fluxdrive.core.walk import walk
from fluxdrive.errors import FluxdriveError
from fluxdrive.knowledge import Store
from fluxdrive.launch.research.git_history import _git
from fluxdrive.launch.research.model import Point, ResearchAnswer, ResearchExecutor, ResearchRequest
from fluxdrive.launch.research.places import inside, read_text
from fluxdrive.launch.research.repo_research import CODE_SUFFIXES, MAX_FILES_SCANNED, is_test
from fluxdrive.research.query import terms
from fluxdrive.workspace import DOCUMENT_SUFFIXES, list_files

MAX_PLACES = 6
MAX_COMMITS = 8
MESSAGE_SCAN = 300  # commits whose message names a term, ranked before the best are kept
CONFIG_SUFFIXES = frozenset({".toml", ".yaml", ".yml", ".json", ".ini", ".cfg", ".env"})
_DEFINITION = re.compile(
    r"^\s*(?:export\s+)?(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?"
    r"(?:def|class|function|func|fn|interface|struct|type|const|let|var)\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)"
)
# Files that show the topic without being the project's own handling of it: samples, fixtures, benchmarks.
_AUXILIARY = re.compile(r"(?:^|/)(?:evals?|bench(?:marks?)?|examples?|samples?|fixtures|testdata|vendor|third_party)/")
_COMMENT = re.compile(r"^\s*(?:#|//|/?\*|\"\"\"|'''|--)")
_SOLUTION_DIRS = ("docs/solutions", "docs/postmortems", "docs/incidents", "docs/adr", "docs/decisions", "adr")


def scope_of(request: ResearchRequest) -> Path:
    """The directory or file the question is about (the trigger's location), confined to the root."""
    location = request.trigger.location
    if not location:
        return request.root
    found = inside(request.root, request.root / location)
    if found is None:
        raise FluxdriveError(f"the scope {location} is outside the project root")
    return found


def _scope_label(request: ResearchRequest, scope: Path) -> str:
    return "." if scope == request.root else scope.relative_to(request.root).as_posix()


class _Terms:
    """Finds the question's terms as whole words or identifier parts, and weighs them by rarity.

    ``retry`` is found in ``max_retries``, ``RetryPolicy`` and ``retrying``
    (camelCase and snake_case are split, common suffixes allowed) but ``lock``
    is not found in ``block`` or ``clock``. A term found in few files says
    more than one found everywhere (inverse document frequency).
    """

    SUFFIX = r"(?:s|es|ed|d|ing|er|ers)?"

    def __init__(self, words: Sequence[str]) -> None:
        self.words = tuple(words)
        self.base: dict[str, str] = {}
        for word in (w.lower() for w in words):
            self.base.setdefault(word, word)
            if word.endswith("y"):  # retry -> retries, retried
                self.base.setdefault(word[:-1] + "ies", word)
                self.base.setdefault(word[:-1] + "ied", word)
            if word.endswith("e"):  # cache -> caching
                self.base.setdefault(word[:-1] + "ing", word)
        alternatives = "|".join(re.escape(w) for w in sorted(self.base, key=len, reverse=True))
        self.pattern = re.compile(rf"(?<![a-z0-9])({alternatives}){self.SUFFIX}(?![a-z0-9])") if words else None
        self.weight: dict[str, float] = {}

    @staticmethod
    def _split(text: str) -> str:
        return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", text).lower()

    def find(self, text: str) -> set[str]:
        """The terms ``text`` carries."""
        if self.pattern is None:
            return set()
        return {self.base[found] for found in self.pattern.findall(self._split(text))}

    def weigh(self, document_frequency: Counter[str], documents: int) -> None:
        self.weight = {t: math.log(1 + documents / max(1, n)) for t, n in document_frequency.items()}

    def value(self, terms: Iterable[str]) -> float:
        return max((self.weight.get(t, 1.0) for t in terms), default=0.0)


@dataclass
class _Hit:
    relative: str
    line: int
    name: str
    kind: str  # def / module / code / comment / doc / config
    text: str
    terms: frozenset[str]
    doc: str = ""


KIND_WEIGHT = {"def": 8.0, "module": 6.0, "code": 2.0, "comment": 1.0, "doc": 1.0, "config": 1.0}


@dataclass
class _FileScore:
    relative: str
    hits: list[_Hit] = field(default_factory=list)
    words: Counter[str] = field(default_factory=Counter)
    score: float = 0.0

    def rank(self, terms: _Terms) -> None:
        """Hits weighted by kind and the rarest term they carry, plus the breadth of terms; samples count less."""
        score = sum(KIND_WEIGHT[h.kind] * terms.value(h.terms) for h in self.hits)
        values = sorted((terms.value((t,)) for t in self.words), reverse=True)
        score += 4 * sum(values[1:])  # several different terms in one file: it is about the topic
        if is_test(self.relative) or _AUXILIARY.search(self.relative):
            score /= 3
        self.score = score


def _docstring(tree: ast.AST | None, line: int) -> str:
    if tree is None:
        return ""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.lineno == line:
            text = ast.get_docstring(node) or ""
            return text.strip().splitlines()[0] if text.strip() else ""
    return ""


def _module_doc(tree: ast.AST | None) -> str:
    if not isinstance(tree, ast.Module):
        return ""
    text = ast.get_docstring(tree) or ""
    return text.strip().splitlines()[0] if text.strip() else ""


def _scan_file(relative: str, text: str, terms: _Terms) -> _FileScore | None:
    suffix = Path(relative).suffix.lower()
    kind = "code" if suffix in CODE_SUFFIXES else "doc" if suffix in DOCUMENT_SUFFIXES else "config"
    scored = _FileScore(relative)
    tree: ast.AST | None = None
    if suffix == ".py":
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            tree = None
    for number, line in enumerate(text.splitlines(), 1):
        found = terms.find(line)
        if not found:
            continue
        scored.words.update(found)
        definition = _DEFINITION.match(line) if kind == "code" else None
        named = terms.find(definition.group(1)) if definition else set()
        if definition and named:
            doc = _docstring(tree, number) if tree is not None else ""
            scored.hits.append(_Hit(relative, number, definition.group(1), "def", line.strip(), frozenset(named), doc))
        else:
            line_kind = "comment" if kind == "code" and _COMMENT.match(line) else kind
            scored.hits.append(_Hit(relative, number, "", line_kind, line.strip(), frozenset(found)))
    if not scored.hits:
        return None
    named = terms.find(Path(relative).stem)
    if tree is not None and named:
        scored.hits.insert(0, _Hit(relative, 1, Path(relative).stem, "module", "", frozenset(named), _module_doc(tree)))
    return scored


def _files(request: ResearchRequest, scope: Path) -> tuple[list[str], list[str]]:
    gaps: list[str] = []
    listed = list(list_files(scope, request.root).files)
    wanted = [f for f in listed if Path(f).suffix.lower() in CODE_SUFFIXES | DOCUMENT_SUFFIXES | CONFIG_SUFFIXES]
    if len(wanted) > MAX_FILES_SCANNED:
        gaps.append(f"only the first {MAX_FILES_SCANNED} of {len(wanted)} files under the scope were searched")
        wanted = wanted[:MAX_FILES_SCANNED]
    return wanted, gaps


def _clip(text: str, width: int = 110) -> str:
    text = " ".join(text.split()).replace("`", "'")
    return text if len(text) <= width else text[: width - 1] + "…"


def _place_point(scored: _FileScore, tests: Sequence[str], terms: _Terms) -> Point:
    definitions = sorted(
        (h for h in scored.hits if h.kind in ("def", "module")),
        key=lambda h: (h.kind != "module", -terms.value(h.terms), h.line),
    )
    terms_seen = ", ".join(w for w, _n in scored.words.most_common(4))
    if definitions:
        first = definitions[0]
        where = f"{first.relative}:{first.line}"
        what = f"module {first.name}" if first.kind == "module" else f"`{_clip(first.text, 70)}`"
        text = f"{where} {what}" + (f": {first.doc}" if first.doc else "")
    else:
        first = scored.hits[0]
        text = f"{first.relative}:{first.line} mentions {terms_seen}: `{_clip(first.text, 80)}`"
    details = [
        f"{h.relative}:{h.line} `{_clip(h.text, 70)}`" + (f": {_clip(h.doc, 80)}" if h.doc else "")
        for h in definitions[1:4]
        if h.kind == "def"
    ]
    if not details:
        details = [f"{h.relative}:{h.line} `{_clip(h.text, 80)}`" for h in scored.hits[1:3] if h.kind != "module"]
    if tests:
        details.append("covered by " + ", ".join(tests[:3]) + (f" and {len(tests) - 3} more" if len(tests) > 3 else ""))
    details.append(f"terms found: {terms_seen} ({len(scored.hits)} line(s))")
    return Point(_clip(text, 220), tuple(details))


def _tests_naming(names: Sequence[str], texts: dict[str, str]) -> list[str]:
    wanted = [n for n in names if len(n) >= 4]
    if not wanted:
        return []
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(n) for n in wanted) + r")\b")
    return sorted(path for path, text in texts.items() if is_test(path) and pattern.search(text))


def repo_search(request: ResearchRequest) -> ResearchAnswer:
    """``repo-research`` for a free question: where the project deals with the question's terms."""
    question = request.trigger.question
    words = terms(question)
    matcher = _Terms(words)
    scope = scope_of(request)
    label = _scope_label(request, scope)
    if matcher.pattern is None:
        return ResearchAnswer(
            sources=(label,),
            points=(Point("No searchable terms in the question (only common words)."),),
            confidence="low",
            confidence_note="nothing to search for",
            gaps=("rephrase the question with the names of the things it is about",),
        )
    files, gaps = _files(request, scope)
    texts: dict[str, str] = {}
    scored: list[_FileScore] = []
    for relative in files:
        request.check()
        text = read_text(request.root / relative)
        if text is None:
            continue
        texts[relative] = text
        found = _scan_file(relative, text, matcher)
        if found is not None:
            scored.append(found)
    matcher.weigh(Counter(t for s in scored for t in s.words), len(texts))
    for place in scored:
        place.rank(matcher)
    scored.sort(key=lambda s: (-s.score, s.relative))
    code = [s for s in scored if Path(s.relative).suffix.lower() in CODE_SUFFIXES and not is_test(s.relative)]
    code.sort(key=lambda s: bool(_AUXILIARY.search(s.relative)))  # stable: the project's own code first
    prose = [s for s in scored if Path(s.relative).suffix.lower() not in CODE_SUFFIXES]
    if not code and not prose:
        return ResearchAnswer(
            sources=(label,),
            points=(Point(f"Nothing under {label} mentions {', '.join(words[:6])}."),),
            confidence="medium",
            confidence_note=f"searched {len(texts)} files for {len(words)} terms",
            gaps=(*gaps, "the project may use words the search did not try"),
            how=f"searched {len(texts)} files under {label}",
        )
    points: list[Point] = []
    sources: list[str] = []
    for place in code[:MAX_PLACES]:
        names = [h.name for h in place.hits if h.kind == "def"]
        points.append(_place_point(place, _tests_naming(names, texts), matcher))
        sources.append(place.relative)
    for place in prose[:2]:
        hit = place.hits[0]
        kind = "configuration" if Path(place.relative).suffix.lower() in CONFIG_SUFFIXES else "documentation"
        points.append(Point(f"{kind}: {place.relative}:{hit.line} `{_clip(hit.text, 100)}`"))
        sources.append(place.relative)
    if len(code) > MAX_PLACES:
        rest = ", ".join(s.relative for s in code[MAX_PLACES : MAX_PLACES + 5])
        gaps.append(f"{len(code) - MAX_PLACES} more code file(s) mention the terms: {rest}")
    strong = sum(1 for s in code[:MAX_PLACES] if any(h.kind in ("def", "module") for h in s.hits))
    confidence: Literal["high", "medium", "low"] = "high" if strong >= 2 else "medium" if code else "low"
    return ResearchAnswer(
        sources=tuple(sources),
        points=tuple(points),
        confidence=confidence,
        confidence_note=f"{strong} file(s) define something named after the terms; {len(scored)} of {len(texts)} "
        f"searched files mention them",
        gaps=(*gaps, "an extractive answer: it shows where, the code says how; no model read it"),
        how=f"searched {len(texts)} files under {label} for {', '.join(words[:5])}",
    )


def history_search(request: ResearchRequest) -> ResearchAnswer:
    """``git-history`` for a free question: commits whose message or change carries the terms."""
    words = [w for w in terms(request.trigger.question) if re.fullmatch(r"[\w.-]+", w)]
    scope = scope_of(request)
    label = _scope_label(request, scope)
    probe = _git(request, "rev-parse", "--is-inside-work-tree")
    if probe is None or probe.returncode != 0 or not words:
        why = "git is not available" if probe is None else "no searchable terms" if words else "not a git repository"
        return ResearchAnswer(
            sources=(label,),
            points=(Point(f"No history searched: {why}."),),
            confidence="low",
            confidence_note=why,
            gaps=("history could not be read",),
        )
    matcher = _Terms(words)
    regex = "|".join(re.escape(w) for w in words[:12])
    path = ["--", _scope_label(request, scope)]
    listed = _git(
        request, "log", "--no-merges", "--date=short", "--name-only", "--format=%x1e%H%x1f%ad%x1f%an%x1f%s%x1f%b%x1d",
        "-n", str(MESSAGE_SCAN), "-i", "-E", f"--grep={regex}", *path,
    )  # fmt: skip
    commits = _ranked(_commits(listed.stdout if listed is not None and listed.returncode == 0 else ""), matcher)
    how = "message"
    if not commits:  # no message names the topic: look for it in what the commits changed
        changed = _git(
            request, "log", "--no-merges", "--date=short", "--name-only", "--format=%x1e%H%x1f%ad%x1f%an%x1f%s%x1f%x1d",
            "-n", str(MAX_COMMITS), "-i", f"-G{regex}", *path,
        )  # fmt: skip
        commits = _commits(changed.stdout if changed is not None and changed.returncode == 0 else "")[:MAX_COMMITS]
        how = "change"
    if not commits:
        return ResearchAnswer(
            sources=(label,),
            points=(Point(f"No commit under {label} mentions {', '.join(words[:6])} in its message or its change."),),
            confidence="medium",
            confidence_note="searched the whole history of the scope",
            how="searched git log messages and changes",
        )
    points = [
        Point(
            f"{c.sha[:12]} {c.day} {_clip(c.subject, 100)} ({c.author}; terms in its {how})",
            (f"touched {', '.join(c.touched[:4])}" + (f" and {len(c.touched) - 4} more" if len(c.touched) > 4 else ""),)
            if c.touched
            else (),
        )
        for c in commits
    ]
    return ResearchAnswer(
        sources=tuple(f"commit {c.sha[:12]}" for c in commits),
        points=tuple(points),
        confidence="medium" if how == "message" else "low",
        confidence_note=f"{len(commits)} commit(s) name the terms in their {how}; a commit that changed behaviour "
        "without naming it is not found",
        gaps=(f"at most {MAX_COMMITS} commits, those naming the most terms first",),
        how=f"searched git log {'messages (--grep)' if how == 'message' else 'changes (-G)'}",
    )


@dataclass(frozen=True, slots=True)
class _Commit:
    sha: str
    day: str
    author: str
    subject: str
    body: str
    touched: tuple[str, ...]


def _commits(output: str) -> list[_Commit]:
    """Records of ``git log`` with the format of :func:`history_search` (\\x1e record, \\x1f field, \\x1d body end)."""
    found = []
    for record in output.split("\x1e"):
        head, _sep, files = record.partition("\x1d")
        fields = head.strip("\n").split("\x1f")
        if len(fields) != 5:
            continue
        sha, day, author, subject, body = fields
        touched = tuple(line.strip() for line in files.splitlines() if line.strip())
        found.append(_Commit(sha, day, author, subject, body, touched))
    return found


def _ranked(commits: Sequence[_Commit], terms: _Terms) -> list[_Commit]:
    """Commits naming the most distinct terms (the subject counts double), newest first on a tie.

    A commit naming one term only in its body (a long message that happens to
    say "output") is noise for a question with several terms.
    """
    wanted = len(set(terms.find(" ".join(terms.words)))) or 1
    scored = []
    for commit in commits:
        subject, body = terms.find(commit.subject), terms.find(commit.body) - terms.find(commit.subject)
        score = 2 * len(subject) + len(body)
        if score >= min(2, 2 * wanted - 1):
            scored.append((score, commit))
    scored.sort(key=lambda item: (-item[0], item[1].day, item[1].sha), reverse=False)
    scored.sort(key=lambda item: -item[0])
    return [c for _score, c in scored][:MAX_COMMITS]


def _notes(root: Path) -> Iterable[tuple[str, str]]:
    for folder in _SOLUTION_DIRS:
        base = inside(root, root / folder)
        if base is None or not base.is_dir():
            continue
        notes = (base / name for name in walk(base, gitignore=False) if name.endswith(".md"))  # the one skip policy
        for path in sorted(notes)[:500]:
            resolved = inside(root, path)
            text = read_text(resolved) if resolved is not None else None
            if text is not None and resolved is not None:
                yield resolved.relative_to(root).as_posix(), text


def lessons_executor(store: Store | None) -> ResearchExecutor:
    """``learnings`` for a free question: knowledge entries and solution notes that carry the terms."""

    def execute(request: ResearchRequest) -> ResearchAnswer:
        words = terms(request.trigger.question)
        matcher = _Terms(words)
        pattern = matcher.pattern
        points: list[Point] = []
        sources: list[str] = []
        searched = 0
        if pattern is not None and store is not None:
            for archived, pool in ((False, store.active), (True, store.archived)):
                for entry_id, entry in sorted(pool.items()):
                    searched += 1
                    if matcher.find(f"{entry.title} {entry.heuristic}"):
                        mark = " (archived)" if archived else ""
                        points.append(Point(f"{entry.title}{mark}: {entry.heuristic}", (f"entry {entry_id}",)))
                        path = store.path(entry_id, archived=archived)
                        inside_root = path.is_relative_to(request.root)
                        sources.append(path.relative_to(request.root).as_posix() if inside_root else path.name)
        if pattern is not None:
            for relative, text in _notes(request.root):
                request.check()
                searched += 1
                headings = (line.lstrip("# ").strip() for line in text.splitlines() if line.startswith("#"))
                title = next(headings, relative)
                found = pattern.search(_Terms._split(text))
                if found:
                    line = text.count("\n", 0, found.start()) + 1
                    points.append(Point(f"{relative}:{line} {_clip(title, 120)}"))
                    sources.append(relative)
        points = points[:MAX_PLACES]
        if not points:
            return ResearchAnswer(
                sources=tuple(f"{d}/" for d in _SOLUTION_DIRS if (request.root / d).is_dir()) or (".",),
                points=(Point("No recorded lesson, solution note, postmortem or ADR mentions the question's terms."),),
                confidence="medium",
                confidence_note=f"searched {searched} knowledge entries and notes",
                gaps=("lessons never written down (chats, commit messages) are not searched here",),
                how="searched the knowledge store and docs/solutions, postmortems and ADRs",
            )
        return ResearchAnswer(
            sources=tuple(dict.fromkeys(sources)),
            points=tuple(points),
            confidence="high" if len(points) >= 2 else "medium",
            confidence_note="the project's own recorded lessons",
            how="searched the knowledge store and docs/solutions, postmortems and ADRs",
        )

    return execute
