"""The ``repo-research`` executor: the code around the flagged line, from the repository's own files.

The enclosing function or class (``ast`` for Python, regexes otherwise), the
tests and callers that use it (found by text search), and related files.
Offline it also answers ``framework-docs`` and ``best-practices`` questions
from the repository, standing in for agents that need the web.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fluxdrive.errors import FluxdriveError
from fluxdrive.launch.research.model import Notes, Point, ResearchAnswer, ResearchRequest
from fluxdrive.launch.research.places import Place, inside, quote_code, read_text, trigger_places
from fluxdrive.workspace import list_files

MAX_FILES_SCANNED = 2_000

CODE_SUFFIXES = frozenset({
    ".py", ".pyi", ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".go", ".rb", ".java", ".kt", ".kts", ".rs",
    ".php", ".cs", ".c", ".h", ".cc", ".cpp", ".hpp", ".swift", ".scala", ".sh", ".bash", ".lua", ".ex", ".exs",
    ".erl", ".clj", ".dart", ".vue", ".svelte",
})  # fmt: skip
_TEST_NAME = re.compile(
    r"(?:^test_.+\.py$|_test\.py$|^conftest\.py$|_test\.go$|\.(?:test|spec)\.[cm]?[jt]sx?$"
    r"|_(?:spec|test)\.rb$|Tests?\.(?:java|kt|cs|php|swift|scala)$|_test\.(?:rs|exs|dart)$)"
)
_TEST_DIRS = frozenset({"test", "tests", "__tests__", "spec", "specs", "testing", "e2e"})
_STEM_AFFIXES = re.compile(r"^test_|_test$|_spec$|Tests?$")
_DEFINITIONS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("function", re.compile(r"^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)")),
    (
        "function",
        re.compile(
            r"^\s*(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s+)?"
            r"(?:function\b|\([^)]*\)\s*=>|[A-Za-z_$][\w$]*\s*=>)"
        ),
    ),
    ("function", re.compile(r"^\s*func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)")),
    ("function", re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:unsafe\s+)?fn\s+([A-Za-z_]\w*)")),
    ("function", re.compile(r"^\s*(?:async\s+)?def\s+(?:self\.)?([A-Za-z_]\w*[?!]?)")),
    (
        "class",
        re.compile(
            r"^\s*(?:export\s+)?(?:default\s+)?(?:(?:public|private|protected|abstract|final|static|sealed)\s+)*"
            r"(?:class|interface|struct|module|trait|enum)\s+([A-Za-z_$][\w$]*)"
        ),
    ),
)
_IMPORT_LINE = re.compile(
    r"^[ \t]*(?:from|import|use|require|require_relative|#include|@import)\b.*$|^.*\b(?:require|import)\s*\(.*$",
    re.MULTILINE,
)


@dataclass(frozen=True, slots=True)
class _Symbol:
    name: str
    kind: str
    line: int
    container: str | None = None

    def search_names(self) -> tuple[str, ...]:
        """What callers would write: the name itself; the class for a dunder method."""
        if self.name.startswith("__") and self.name.endswith("__"):
            return (self.container,) if self.container else ()
        return (self.name,)


def _python_symbol(text: str, line: int) -> _Symbol | None:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    around: list[ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            if start <= line <= (node.end_lineno or node.lineno):
                around.append(node)
    if not around:
        return None
    around.sort(key=lambda n: n.lineno)
    inner = around[-1]
    classes = [n.name for n in around[:-1] if isinstance(n, ast.ClassDef)]
    container = classes[-1] if classes else None
    kind = "class" if isinstance(inner, ast.ClassDef) else "method" if container else "function"
    return _Symbol(inner.name, kind, inner.lineno, container)


def _regex_symbol(lines: Sequence[str], line: int) -> _Symbol | None:
    for number in range(min(line, len(lines)), 0, -1):
        for kind, pattern in _DEFINITIONS:
            match = pattern.match(lines[number - 1])
            if match:
                return _Symbol(match.group(1), kind, number)
    return None


def _enclosing(place: Place, text: str) -> _Symbol | None:
    """The innermost function or class around the flagged line (``ast`` for Python, regexes otherwise)."""
    if place.line is None:
        return None
    if place.path.suffix in (".py", ".pyi"):
        found = _python_symbol(text, place.line)
        if found is not None:
            return found
    return _regex_symbol(text.splitlines(), place.line)


def is_test(relative: str) -> bool:
    *dirs, name = relative.split("/")
    return bool(_TEST_NAME.search(name)) or any(d in _TEST_DIRS for d in dirs)


def _core_stem(relative: str) -> str:
    name = relative.rsplit("/", 1)[-1]
    return _STEM_AFFIXES.sub("", name.split(".", 1)[0]) or name


def _module_stem(place: Place) -> str:
    stem = place.path.stem
    if stem == "__init__":
        return place.relative.rsplit("/", 2)[-2] if "/" in place.relative else stem
    return stem


@dataclass(frozen=True, slots=True)
class _Use:
    relative: str
    line: int
    code: str
    why: str
    count: int = 1
    direct: bool = True  # uses or imports the name itself, not only the module

    def detail(self) -> str:
        times = f" ({self.count} mentions)" if self.count > 1 else ""
        return f"{self.relative}:{self.line} {self.why}: {quote_code(self.code)}{times}"


def _name_pattern(names: Sequence[str]) -> re.Pattern[str] | None:
    if not names:
        return None
    return re.compile(r"(?<![\w$])(?:" + "|".join(re.escape(n) for n in names) + r")(?![\w$])")


def _definition_of(code: str, name: str) -> bool:
    return bool(re.search(r"\b(?:def|function|func|fn|class|interface|struct)\s+\*?\s*" + re.escape(name), code))


def _line_at(text: str, offset: int) -> tuple[int, str]:
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    return text.count("\n", 0, offset) + 1, text[start : end if end >= 0 else len(text)]


def _first_use(relative: str, text: str, pattern: re.Pattern[str] | None) -> _Use | None:
    """The first line using one of the names (a call before an import; never a definition), and how many do."""
    if pattern is None:
        return None
    first: tuple[int, str, str] | None = None
    imported: tuple[int, str, str] | None = None
    lines: set[int] = set()
    for match in pattern.finditer(text):
        number, code = _line_at(text, match.start())
        if number in lines or _definition_of(code, match.group(0)):
            continue
        lines.add(number)
        if _IMPORT_LINE.fullmatch(code):
            imported = imported or (number, code, f"imports `{match.group(0)}`")
        elif first is None:
            first = (number, code, f"uses `{match.group(0)}`")
    found = first or imported
    if found is None:
        return None
    return _Use(relative, found[0], found[1], found[2], len(lines))


def _import_of(relative: str, text: str, stem: str) -> _Use | None:
    word = re.compile(r"(?<![\w$])" + re.escape(stem) + r"(?![\w$])")
    for match in _IMPORT_LINE.finditer(text):
        if word.search(match.group(0)):
            number, code = _line_at(text, match.start())
            return _Use(relative, number, code, f"imports module `{stem}`", direct=False)
    return None


@dataclass
class _Scan:
    tests: list[_Use] = dataclasses.field(default_factory=list)
    callers: list[_Use] = dataclasses.field(default_factory=list)
    scanned: int = 0
    candidates: int = 0
    too_large: int = 0
    escaped: int = 0


def _scan(request: ResearchRequest, place: Place, files: Sequence[str], symbol: _Symbol | None) -> _Scan:
    """Read up to MAX_FILES_SCANNED source files (same directory, then tests, then the rest)."""
    directory = place.relative.rpartition("/")[0]
    names = symbol.search_names() if symbol else ()
    pattern = _name_pattern(names)
    stem = _module_stem(place)
    code = [f for f in files if Path(f).suffix in CODE_SUFFIXES and f != place.relative]
    code.sort(key=lambda f: (f.rpartition("/")[0] != directory, not is_test(f), f))
    scan = _Scan(candidates=len(code))
    for relative in code[:MAX_FILES_SCANNED]:
        if scan.scanned % 25 == 0:
            request.check()
        scan.scanned += 1
        path = inside(request.root, request.root / relative)
        if path is None:
            scan.escaped += 1
            continue
        text = read_text(path)
        if text is None:
            scan.too_large += 1
            continue
        use = _first_use(relative, text, pattern)
        if is_test(relative):
            hit = use or _import_of(relative, text, stem)
            if hit is not None:
                scan.tests.append(hit)
        elif use is not None:
            scan.callers.append(use)
    scan.tests.sort(key=lambda u: u.relative)
    scan.callers.sort(key=lambda u: u.relative)
    return scan


def _listing(request: ResearchRequest, out: Notes) -> tuple[str, ...]:
    try:
        listed = list_files(request.root, request.root)
    except (FluxdriveError, OSError) as exc:
        out.gaps.append(f"could not list the project's files: {exc}")
        return ()
    outside = [path for path, why in listed.skipped if "outside the project root" in why]
    if outside:
        out.gaps.append(f"{len(outside)} file(s) resolving outside the project root were skipped")
    return listed.files


def _related(place: Place, files: Sequence[str]) -> list[Point]:
    directory = place.relative.rpartition("/")[0]
    stem = _core_stem(place.relative)
    same_stem = sorted(f for f in files if f != place.relative and _core_stem(f) == stem)
    siblings = sorted(f for f in files if f != place.relative and f.rpartition("/")[0] == directory)
    points = []
    if same_stem:
        points.append(Point(f"Same stem `{stem}`: {len(same_stem)} file(s)", tuple(same_stem[:6])))
    where = directory or "the project root"
    if siblings:
        shown = ", ".join(siblings[:8]) + (f", … {len(siblings) - 8} more" if len(siblings) > 8 else "")
        points.append(Point(f"Same directory ({where}): {len(siblings)} other file(s): {shown}"))
    else:
        points.append(Point(f"No other file in {where}."))
    return points


def _symbol_point(place: Place, symbol: _Symbol | None) -> Point:
    if symbol is None:
        where = f"{place.relative}:{place.line}" if place.line else place.relative
        return Point(f"No enclosing function or class found for {where}: tests matched by module import only.")
    inside = f" of class `{symbol.container}`" if symbol.container else ""
    return Point(
        f"{place.relative}:{place.line} is inside {symbol.kind} `{symbol.name}`{inside} "
        f"(defined at {place.relative}:{symbol.line})."
    )


def _coverage_points(place: Place, symbol: _Symbol | None, scan: _Scan) -> list[Point]:
    stem = _module_stem(place)
    names = ", ".join(f"`{n}`" for n in (symbol.search_names() if symbol else ()))
    if scan.tests:
        tests = Point(
            f"Tests that use {names or 'it'} or import `{stem}`: {len(scan.tests)} file(s)",
            tuple(u.detail() for u in scan.tests[:6]),
        )
    else:
        tests = Point(f"No test file imports `{stem}`" + (f" or uses {names}" if names else "") + ": looks untested.")
    if not names:
        callers = Point("Callers not searched: no function or class name to look for.")
    elif scan.callers:
        callers = Point(
            f"Callers outside tests: {len(scan.callers)} file(s) use {names}",
            tuple(u.detail() for u in scan.callers[:6]),
        )
    else:
        callers = Point(f"No file outside tests uses {names}: no callers found by text search.")
    direct = sum(1 for u in scan.tests if u.direct)
    if direct:
        verdict = f"used by {direct} test file(s)"
    elif scan.tests:
        verdict = f"no test uses it by name; {len(scan.tests)} test file(s) import `{stem}`"
    else:
        verdict = "no covering test found"
    reach = f"{len(scan.callers)} calling file(s)" if names else "callers unknown"
    return [tests, callers, Point(f"Conclusion: {verdict}; reach: {reach}.")]


def repo_research(request: ResearchRequest) -> ResearchAnswer:
    """The code around the flagged location: enclosing symbol, covering tests, callers, related files."""
    out = Notes()
    places, gaps = trigger_places(request, limit=1)
    out.gaps.extend(gaps)
    if not places:
        return ResearchAnswer((), (), "low", "a location inside the project", tuple(out.gaps))
    place = places[0]
    text = read_text(place.path)
    if text is None:
        out.gaps.append(f"{place.relative} is larger than 2 MB, binary or unreadable: not read")
        text = ""
    symbol = _enclosing(place, text)
    files = _listing(request, out)
    scan = _scan(request, place, files, symbol)
    out.points.append(_symbol_point(place, symbol))
    out.points.extend(_coverage_points(place, symbol, scan))
    out.points.extend(_related(place, files))
    span = f":{symbol.line}-{place.line}" if symbol and place.line else f":{place.line}" if place.line else ""
    out.sources.append(f"{place.relative}{span}")
    out.sources.extend(f"{u.relative}:{u.line}" for u in [*scan.tests[:3], *scan.callers[:3]])
    out.sources.append(f"file listing honoring .gitignore: {len(files)} file(s), {scan.scanned} source file(s) read")
    if scan.candidates > MAX_FILES_SCANNED:
        out.gaps.append(f"read the first {MAX_FILES_SCANNED:,} of {scan.candidates:,} source files (nearby first)")
    if scan.too_large:
        out.gaps.append(f"{scan.too_large} file(s) over 2 MB, binary or unreadable were skipped")
    if scan.escaped:
        out.gaps.append(f"{scan.escaped} file(s) resolving outside the project root were skipped")
    out.gaps.append("text search misses calls through aliases, strings or dynamic dispatch")
    note = f"running the tests with coverage on {place.relative} would settle what is exercised"
    return ResearchAnswer(tuple(out.sources), tuple(out.points), "medium" if symbol else "low", note, tuple(out.gaps))
