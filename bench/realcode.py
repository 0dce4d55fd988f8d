"""Score fluxdrive on real code, with bandit and semgrep beside it in the same run (issue 27).

OWASP BenchmarkPython (``bench/security.py``) rewards what its generator
writes; users run fluxdrive on real projects. This bench measures both sides
of that on corpora we chose and wrote the truth for ourselves:

- **Real vulnerable code** (``bench/realcode/vulnerable.yaml``): intentionally
  vulnerable apps with published solutions, and real CVEs taken at the parent
  of their fix commit. Each weakness names its CWE, file and lines, written
  from the solution or fix before any tool ran. A weakness is *found* by a
  tool when one of its *flagged* results - fluxdrive P0/P1, bandit
  MEDIUM/HIGH, semgrep ERROR/WARNING - is in the weakness's file within +-3
  lines of one of its lines. Printed: found / weaknesses (recall) and the
  number of flagged results in the reviewed tree (what a user must read),
  per case, per language (with the cases where a tool found anything: one
  find is what makes a reviewer look), per CWE and in total, then every
  weakness fluxdrive missed
  (id, file:line, what, and any lower-severity fluxdrive finding there), so a
  developer can work on them.
- **Healthy, well-kept projects** (``bench/realcode/healthy.yaml``), reviewed
  whole as a user would (docs, tests, examples, CI files): the P0/P1 count,
  bandit's MEDIUM/HIGH count and semgrep's ERROR/WARNING count, each also per
  100,000 non-blank lines of code (``.py``, ``.js``, ``.ts``, ``.go``, ...
  files fluxdrive reviews), per project, per language and in total, and the
  hand-labelled precision: every location
  of every fluxdrive P0/P1 finding is matched to the manifest's ``labels``
  (same project and file, line within +-2, same rule; the rule's namespace
  before ``:`` may differ; a location without a label of its own takes the
  label of the finding's ``location``) and counted real, false or
  UNLABELLED; the unlabelled ones are listed with rule, file:line and title
  for someone to label, and labels that matched nothing are counted (the
  code changed, or the finding went away). bandit issues are matched the
  same way to labels with ``tool: bandit`` (rule = test id or name).

**Material.** Every project is read from a bare git mirror, never from the
network: ``--mirrors DIR`` (default ``/work/.mirror``) holds
``OWNER+NAME/repo`` per repository, as the session tool ``fetch
github:OWNER/NAME`` leaves it. ``--list-sources`` prints the ``fetch``
sources the manifests need (and ``github:semgrep/semgrep-rules``), one a
line: fetch each of them before a full run. Each case
is extracted with ``git archive COMMIT`` into a temporary directory and
committed there once, so every tool sees a plain checkout of that commit; a
case whose mirror or commit is missing is listed as skipped, with the
``fetch`` that would bring it, and the run goes on.

**Tools**, each timed per case (wall seconds); the ratio of fluxdrive's total
time to bandit's on the Python cases is printed (issue 27's goal compares
them; bandit reads nothing else), and per language the ratio of fluxdrive's
to semgrep's on the cases both ran on, over both corpora (issue 28's goal):

- fluxdrive as a user runs it: ``python -m fluxdrive review DIR --yes``
  (static runtime, default agents, output in a temporary directory); a case
  with ``root`` reviews that subdirectory, paths stay repository-relative.
- bandit (``bandit -r DIR -f json -q``; ``--bandit`` picks another one), on
  Python cases only.
- semgrep, when installed: ``sh bench/tools.sh`` puts it in its own
  virtualenv ``.venv-bench`` (found there first, then on PATH, or
  ``--semgrep``). Its rules come from the local mirror of
  semgrep/semgrep-rules: the ``python/`` rules (``javascript/`` and
  ``typescript/`` for a JS or TS case, ``go/`` for Go) are extracted once
  into a cache directory (``--cache``, default ``~/.cache/fluxdrive-bench``),
  without the rules' test files, and run with ``--metrics=off
  --disable-version-check``: nothing is downloaded.

A tool that is not installed is reported as skipped, never a crash.

Run: ``.venv/bin/python bench/realcode.py [--only NAME]... [--language L|all]
[--corpus vulnerable|healthy|both] [--skip bandit|semgrep] [--json OUT]``.
``--language`` defaults to python for the vulnerable corpus and to every
language for the healthy one.

Exit codes: 0 success (skipped cases included), 2 a bad argument or manifest
(one line on stderr), 1 fluxdrive left no readable report for a case (the
figures are still printed, the case listed as failed).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/security.py, when run as a script
from security import (
    Location,
    Run,
    ToolError,
    UsageError,
    bandit_view,
    finding_locations,
    parse_location,
    run_bandit,
    semgrep_view,
)

from fluxdrive.core.atomic import atomic_write_text
from fluxdrive.workspace import review_files

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
VULNERABLE = HERE / "realcode" / "vulnerable.yaml"
HEALTHY = HERE / "realcode" / "healthy.yaml"
MIRRORS = Path("/work/.mirror")
BENCH_VENV = REPO / ".venv-bench"
RULES_REPO = "semgrep/semgrep-rules"
LANGUAGES = ("python", "javascript", "typescript", "go")
# semgrep-rules' top-level directories a case of each language is scanned with.
RULE_DIRS = {
    "python": ("python",),
    "javascript": ("javascript", "typescript"),
    "typescript": ("javascript", "typescript"),
    "go": ("go",),
}
CODE_SUFFIXES = frozenset(
    {".py", ".pyi", ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".go", ".rb", ".java", ".kt",
     ".rs", ".php", ".c", ".h", ".cc", ".cpp", ".hpp", ".cs", ".swift", ".scala", ".sh", ".bash", ".vue", ".svelte"}
)  # fmt: skip
FLAGGING = {
    "fluxdrive": frozenset({"P0", "P1"}),
    "bandit": frozenset({"MEDIUM", "HIGH"}),
    "semgrep": frozenset({"ERROR", "WARNING"}),
}
TOOLS = ("fluxdrive", "bandit", "semgrep")
GROUPS = (("vulnerable", "cases"), ("healthy", "projects"))  # the report's sections and their lists
NEAR_WEAKNESS = 3  # a flagged result within this many lines of a weakness's line finds it
NEAR_LABEL = 2  # a label applies to a finding within this many lines
NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")
REPO_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")
COMMIT = re.compile(r"^[0-9a-f]{40}$")
CWE = re.compile(r"^CWE-\d+$")
SEMGREP_PREFIX = re.compile(r"^.*?semgrep-rules-[0-9a-f]{12}\.")  # semgrep prefixes rule ids with their folder


# ---------------------------------------------------------------- manifests


@dataclass(frozen=True)
class Weakness:
    id: str
    cwe: str
    file: str
    lines: tuple[int, ...]
    what: str


@dataclass(frozen=True)
class Case:
    """A vulnerable case or a healthy project: one repository at one commit."""

    name: str
    repo: str
    commit: str
    license: str
    language: str
    root: str = ""
    kind: str = "healthy"
    weaknesses: tuple[Weakness, ...] = ()

    @property
    def source(self) -> str:
        return f"github:{self.repo}"


@dataclass(frozen=True)
class Label:
    project: str
    file: str
    line: int
    rule: str
    tool: str
    real: bool
    why: str


def _get(entry: Any, key: str, kind: type | tuple[type, ...], where: str, default: Any = None) -> Any:
    if not isinstance(entry, dict):
        raise UsageError(f"{where}: expected a mapping")
    value = entry.get(key, default)
    if value is None or not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise UsageError(f"{where}: '{key}' is missing or not a {getattr(kind, '__name__', kind)}")
    return value


def _read_yaml(path: Path, top: str) -> list[Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise UsageError(f"{path}: cannot read it ({error.strerror})") from None
    except yaml.YAMLError as error:
        raise UsageError(f"{path}: not valid YAML ({str(error).splitlines()[0]})") from None
    if not isinstance(data, dict) or not isinstance(data.get(top), list):
        raise UsageError(f"{path}: expected a mapping with a '{top}' list")
    return list(data[top])


def _case(entry: Any, where: str, *, vulnerable: bool) -> Case:
    name = _get(entry, "name", str, where)
    where = f"{where} ({name})"
    if not NAME.match(name):
        raise UsageError(f"{where}: name must be [a-z0-9-]")
    repo = _get(entry, "repo", str, where)
    commit = _get(entry, "commit", str, where)
    language = _get(entry, "language", str, where)
    if not REPO_NAME.match(repo):
        raise UsageError(f"{where}: repo must be OWNER/NAME, not {repo!r}")
    if not COMMIT.match(commit):
        raise UsageError(f"{where}: commit must be 40 lowercase hex digits")
    if language not in LANGUAGES:
        raise UsageError(f"{where}: language must be one of {', '.join(LANGUAGES)}, not {language!r}")
    root = str(_get(entry, "root", str, where, "")).strip("/")
    weaknesses: list[Weakness] = []
    if vulnerable:
        for index, raw in enumerate(_get(entry, "weaknesses", list, where)):
            place = f"{where} weakness {index + 1}"
            lines = _get(raw, "lines", list, place)
            if not lines or not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in lines):
                raise UsageError(f"{place}: 'lines' must be a non-empty list of line numbers")
            cwe = _get(raw, "cwe", str, place)
            if not CWE.match(cwe):
                raise UsageError(f"{place}: cwe must look like CWE-89, not {cwe!r}")
            weaknesses.append(
                Weakness(
                    _get(raw, "id", str, place),
                    cwe,
                    _get(raw, "file", str, place).strip("/"),
                    tuple(lines),
                    str(raw.get("what", "")),
                )
            )
        if not weaknesses:
            raise UsageError(f"{where}: no weaknesses listed")
    return Case(
        name,
        repo,
        commit,
        str(entry.get("license", "")),
        language,
        root,
        str(entry.get("kind", "app" if vulnerable else "healthy")),
        tuple(weaknesses),
    )


def _unique(names: Iterable[str], what: str, path: Path) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise UsageError(f"{path}: {what} {name!r} is listed twice")
        seen.add(name)


def load_vulnerable(path: Path) -> list[Case]:
    cases = [_case(entry, f"{path} case {i + 1}", vulnerable=True) for i, entry in enumerate(_read_yaml(path, "cases"))]
    _unique((c.name for c in cases), "case", path)
    _unique((w.id for c in cases for w in c.weaknesses), "weakness id", path)
    return cases


def load_healthy(path: Path) -> tuple[list[Case], list[Label]]:
    projects = [
        _case(entry, f"{path} project {i + 1}", vulnerable=False)
        for i, entry in enumerate(_read_yaml(path, "projects"))
    ]
    _unique((p.name for p in projects), "project", path)
    names = {p.name for p in projects}
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    labels = []
    for index, raw in enumerate(data.get("labels") or []):
        where = f"{path} label {index + 1}"
        tool = str(_get(raw, "tool", str, where, "fluxdrive"))
        if _get(raw, "project", str, where) not in names:
            raise UsageError(f"{where}: project {raw['project']!r} is not in the projects list")
        if tool not in TOOLS:
            raise UsageError(f"{where}: tool must be one of {', '.join(TOOLS)}, not {tool!r}")
        labels.append(
            Label(
                _get(raw, "project", str, where),
                _get(raw, "file", str, where).strip("/"),
                _get(raw, "line", int, where),
                _get(raw, "rule", str, where),
                tool,
                _get(raw, "real", bool, where),
                str(raw.get("why", "")),
            )
        )
    return projects, labels


# ---------------------------------------------------------------- mirrors


class NotHereError(Exception):
    """A mirror or commit that is not on this machine: the case is skipped, with the fetch that brings it."""


def _git(*args: str, cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=check)


def mirror_of(mirrors: Path, repo: str) -> Path | None:
    """The git directory of ``repo``'s mirror (bare, or a clone's ``.git``), or None."""
    base = mirrors / repo.replace("/", "+") / "repo"
    for candidate in (base / ".git", base):
        if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir():
            return candidate
    return None


def absent_blobs(mirror: Path, commit: str) -> list[str]:
    """Files of ``commit`` whose content the mirror lacks (a snapshot may leave out its largest files)."""
    listed = _git("-C", str(mirror), "ls-tree", "-r", "-z", "--full-tree", commit).stdout.split("\0")
    blobs: dict[str, list[str]] = {}
    for entry in filter(None, listed):
        meta, _, path = entry.partition("\t")
        _mode, kind, sha = meta.split()
        if kind == "blob":
            blobs.setdefault(sha, []).append(path)
    checked = subprocess.run(
        ["git", "-C", str(mirror), "cat-file", "--batch-check=%(objectname)"],
        input="\n".join(blobs) + "\n",
        capture_output=True,
        text=True,
        check=True,
    )
    return sorted(
        p for line in checked.stdout.splitlines() if line.endswith(" missing") for p in blobs[line.split()[0]]
    )


def _checkout_without(mirror: Path, commit: str, absent: list[str], dest: Path) -> None:
    """Write ``commit``'s files but ``absent`` into ``dest`` through a private index (the mirror is not written)."""
    env = {**os.environ, "GIT_INDEX_FILE": str(dest.parent / f"{dest.name}.index")}
    git = ["git", f"--git-dir={mirror}", f"--work-tree={dest}"]
    subprocess.run([*git, "read-tree", commit], env=env, capture_output=True, text=True, check=True)
    subprocess.run(
        [*git, "update-index", "--force-remove", "-z", "--stdin"],
        input="".join(f"{path}\0" for path in absent),
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    subprocess.run([*git, "checkout-index", "-a", "-f"], env=env, capture_output=True, text=True, check=True)
    Path(env["GIT_INDEX_FILE"]).unlink()


def materialize(case: Case, mirrors: Path, dest: Path) -> list[str]:
    """``git archive`` the case's commit into ``dest`` and commit it there once: a plain checkout for every tool.

    Files whose content the mirror lacks are left out (and returned): they
    are the snapshot's largest files, fonts and images far more often than code.
    """
    mirror = mirror_of(mirrors, case.repo)
    if mirror is None:
        raise NotHereError(f"mirror missing (fetch {case.source})")
    if _git("-C", str(mirror), "cat-file", "-e", f"{case.commit}^{{commit}}", check=False).returncode:
        raise NotHereError(f"commit {case.commit[:12]} not in the mirror (fetch {case.source} again)")
    dest.mkdir(parents=True)
    archive = dest.parent / f"{dest.name}.tar"
    absent: list[str] = []
    if _git("-C", str(mirror), "archive", "--format=tar", "-o", str(archive), case.commit, check=False).returncode:
        absent = absent_blobs(mirror, case.commit)
        _checkout_without(mirror, case.commit, absent, dest)
    else:
        subprocess.run(["tar", "-xf", str(archive), "-C", str(dest)], capture_output=True, check=True)
    archive.unlink(missing_ok=True)
    quiet = ("-c", "user.name=bench", "-c", "user.email=bench@localhost", "-c", "commit.gpgsign=false")
    _git("init", "-q", cwd=dest)
    _git("add", "-A", "-f", cwd=dest)
    _git(*quiet, "commit", "-q", "--no-verify", "--allow-empty", "-m", f"{case.repo} at {case.commit}", cwd=dest)
    return absent


def semgrep_rules(mirrors: Path, cache: Path, directories: Iterable[str]) -> list[Path]:
    """semgrep-rules' rule directories, extracted once per commit into ``cache`` without test files.

    Raises NotHereError when the mirror is not here. Only ``*.yaml``/``*.yml``
    files are kept, and none named ``*.test.*`` or ``*.fixed.*``: the
    examples each rule ships beside it would otherwise be scanned or loaded.
    """
    mirror = mirror_of(mirrors, RULES_REPO)
    if mirror is None:
        raise NotHereError(f"rules mirror missing (fetch github:{RULES_REPO})")
    head = _git("-C", str(mirror), "rev-parse", "HEAD").stdout.strip()
    found = []
    for directory in directories:
        target = cache / f"semgrep-rules-{head[:12]}" / directory
        if not target.is_dir():
            partial = Path(tempfile.mkdtemp(prefix=f".{directory}-", dir=_mkdir(target.parent)))
            listed = _git("-C", str(mirror), "ls-tree", "-d", "--name-only", head, directory).stdout.strip()
            if listed:
                archive = partial / "rules.tar"
                _git("-C", str(mirror), "archive", "--format=tar", "-o", str(archive), head, directory)
                subprocess.run(["tar", "-xf", str(archive), "-C", str(partial)], capture_output=True, check=True)
                archive.unlink()
                for path in sorted((partial / directory).rglob("*")):
                    name = path.name
                    if path.is_file() and (
                        path.suffix not in (".yaml", ".yml") or ".test." in name or ".fixed." in name
                    ):
                        path.unlink()
            (partial / directory).mkdir(exist_ok=True)
            try:
                os.replace(partial / directory, target)  # atomic: a half-extracted rule set is never used
            except OSError:
                if not target.is_dir():
                    raise
            shutil.rmtree(partial, ignore_errors=True)
        if any(target.rglob("*.y*ml")):
            found.append(target)
    return found


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


# ---------------------------------------------------------------- running the tools


def run_fluxdrive(checkout: Path, target: Path, scratch: Path) -> Run:
    """``python -m fluxdrive review TARGET --yes`` (static runtime); its findings.json findings."""
    output = Path(tempfile.mkdtemp(prefix="fluxdrive-", dir=scratch))
    args = [sys.executable, "-m", "fluxdrive", "review", str(target), "--yes", "--runtime", "static"]
    args += ["--output-dir", str(output), "--fail-on", "never", "-q"]
    started = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, check=False, cwd=scratch)
    seconds = time.perf_counter() - started
    report = output / "findings.json"
    if done.returncode not in (0, 1) or not report.is_file():
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise ToolError(f"fluxdrive review exited {done.returncode}: {tail[0]}")
    try:
        data = json.loads(report.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ToolError(f"fluxdrive's findings.json is unreadable ({error})") from None
    return Run("fluxdrive", seconds, list(data.get("findings", [])), f"verdict {data.get('verdict')}")


def semgrep_command(explicit: str | None) -> str | None:
    if explicit:
        return explicit
    local = BENCH_VENV / "bin" / "semgrep"
    return str(local) if local.is_file() else shutil.which("semgrep")


def run_semgrep(command: str, configs: list[Path], target: Path) -> Run:
    if not configs:
        raise ToolError("semgrep-rules has no rules for this language")
    args = [command, "scan", "--json", "--metrics=off", "--disable-version-check", "--quiet"]
    for config in configs:
        args += ["--config", str(config)]
    env = {**os.environ, **QUIET_SEMGREP}
    started = time.perf_counter()
    done = subprocess.run([*args, str(target)], capture_output=True, text=True, check=False, env=env, cwd=target)
    seconds = time.perf_counter() - started
    try:
        data = json.loads(done.stdout)
    except json.JSONDecodeError:
        tail = done.stderr.strip().splitlines()[-1:] or ["no output"]
        raise ToolError(f"semgrep exited {done.returncode} without a JSON report: {tail[0]}") from None
    return Run("semgrep", seconds, list(data.get("results", [])), f"{len(data.get('errors', []))} error(s)")


QUIET_SEMGREP = {"SEMGREP_SEND_METRICS": "off", "SEMGREP_ENABLE_VERSION_CHECK": "0"}


def _version(command: list[str]) -> str:
    env = {**os.environ, **QUIET_SEMGREP}
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=60, env=env)
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    return (done.stdout.strip().splitlines() or ["?"])[0]


@dataclass
class Toolbox:
    """Which tools run in this run, and why the others do not."""

    bandit: str | None
    semgrep: str | None
    mirrors: Path
    cache: Path
    versions: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    rules: dict[str, list[Path]] = field(default_factory=dict)

    def rules_for(self, language: str) -> list[Path]:
        if language not in self.rules:
            self.rules[language] = semgrep_rules(self.mirrors, self.cache, RULE_DIRS[language])
        return self.rules[language]


def toolbox(args: argparse.Namespace) -> Toolbox:
    skip = set(args.skip or [])
    bandit = None
    if "bandit" not in skip:
        bandit = args.bandit or shutil.which("bandit", path=str(Path(sys.executable).parent)) or shutil.which("bandit")
    semgrep = None if "semgrep" in skip else semgrep_command(args.semgrep)
    tools = Toolbox(bandit, semgrep, args.mirrors, args.cache)
    try:
        tools.versions["fluxdrive"] = metadata.version("fluxdrive")
    except metadata.PackageNotFoundError:
        tools.versions["fluxdrive"] = "?"
    if bandit is None:
        tools.notes.append("bandit: " + ("skipped (--skip)" if "bandit" in skip else "not installed, skipped"))
    else:
        tools.versions["bandit"] = _version([bandit, "--version"])
    if semgrep is None:
        why = "skipped (--skip)" if "semgrep" in skip else "not installed (sh bench/tools.sh), skipped"
        tools.notes.append(f"semgrep: {why}")
    elif mirror_of(args.mirrors, RULES_REPO) is None:
        tools.notes.append(f"semgrep: rules mirror missing (fetch github:{RULES_REPO}), skipped")
        tools.semgrep = None
    else:
        tools.versions["semgrep"] = _version([semgrep, "--version", "--disable-version-check"])
    return tools


# ---------------------------------------------------------------- what each tool flagged


@dataclass(frozen=True)
class Hit:
    """One result of a tool, its locations relative to the repository root."""

    tool: str
    severity: str
    rule: str
    title: str
    locations: tuple[Location, ...]
    primary: Location | None = None  # findings.json's ``location``: where a finding's label usually is

    @property
    def flagged(self) -> bool:
        return self.severity in FLAGGING[self.tool]

    def describe(self, location: Location | None = None) -> str:
        where = location or (self.locations[0] if self.locations else "?")
        return f"{self.severity} {self.rule} {where}"


def _rule_names(rule: str) -> set[str]:
    """A rule id and its name without the namespace (``fluxdrive:py-x`` -> ``py-x``), for label matching."""
    return {rule, rule.split(":", 1)[-1]}


def hits(run: Run, checkout: Path, root: str) -> list[Hit]:
    """Every result of ``run`` with repository-relative locations.

    fluxdrive names paths relative to the project (the repository, also when
    a subdirectory is reviewed); should a path be relative to the reviewed
    subdirectory instead, it is mapped back.
    """
    result = []
    for item in run.items:
        if run.tool == "fluxdrive":
            locations = finding_locations(item, checkout)
            severity = str(item.get("severity", ""))
            rule = ",".join(str(r) for r in item.get("rules") or []) or str(item.get("id", ""))
            title = str(item.get("title", ""))
        elif run.tool == "bandit":
            locations, severity, _ = bandit_view(item, checkout)
            rule = f"{item.get('test_id', '')}:{item.get('test_name', '')}"
            title = str(item.get("issue_text", ""))
        else:
            locations, severity, _ = semgrep_view(item, checkout)
            rule = SEMGREP_PREFIX.sub("", str(item.get("check_id", "")))
            title = str((item.get("extra") or {}).get("message", ""))
        mapped = tuple(_in_repository(location, checkout, root) for location in locations)
        primary = item.get("location") if run.tool == "fluxdrive" else None
        first = _in_repository(parse_location(str(primary), checkout), checkout, root) if primary else None
        result.append(Hit(run.tool, severity, rule, " ".join(title.split()), mapped, first or next(iter(mapped), None)))
    return result


def _in_repository(location: Location, checkout: Path, root: str) -> Location:
    if root and not (checkout / location.path).exists() and (checkout / root / location.path).exists():
        return Location(f"{root}/{location.path}", location.start, location.end)
    return location


def near(location: Location, path: str, line: int, slack: int) -> bool:
    if location.path != path or location.start is None:
        return False
    end = location.end if location.end is not None else location.start
    return location.start - slack <= line <= end + slack


def weakness_hits(weakness: Weakness, found: list[Hit]) -> list[str]:
    return [
        hit.describe(location)
        for hit in found
        for location in hit.locations
        if any(near(location, weakness.file, line, NEAR_WEAKNESS) for line in weakness.lines)
    ]


# ---------------------------------------------------------------- one case


def _run_tools(case: Case, checkout: Path, scratch: Path, tools: Toolbox) -> dict[str, Any]:
    """Each tool on the case: {tool: {"seconds", "hits"} or {"error"}}; fluxdrive's failure is recorded, not raised."""
    target = checkout / case.root if case.root else checkout
    runs: dict[str, Any] = {}
    attempts: list[tuple[str, Callable[[], Run | None]]] = [
        ("fluxdrive", lambda: run_fluxdrive(checkout, target, scratch))
    ]
    if tools.bandit is not None and case.language == "python":  # bandit reads nothing else
        command = tools.bandit
        attempts.append(("bandit", lambda: run_bandit(target, command)))
    if tools.semgrep is not None:
        semgrep = tools.semgrep
        attempts.append(("semgrep", lambda: run_semgrep(semgrep, tools.rules_for(case.language), target)))
    for name, attempt in attempts:
        try:
            run = attempt()
        except (ToolError, NotHereError, subprocess.CalledProcessError) as error:
            runs[name] = {"error": str(error) or type(error).__name__}
            continue
        if run is not None:
            runs[name] = {"seconds": run.seconds, "hits": hits(run, checkout, case.root), "note": run.note}
    return runs


def _tool_figures(run: dict[str, Any]) -> dict[str, Any]:
    """What every score reports for one tool's run: its error, or its time, note and flagged count."""
    if "error" in run:
        return {"error": run["error"]}
    flagged = sum(hit.flagged for hit in run["hits"])
    return {"seconds": round(run["seconds"], 2), "note": run.get("note", ""), "flagged": flagged}


def score_vulnerable(case: Case, runs: dict[str, Any], checkout: Path | None = None) -> dict[str, Any]:
    """Per tool: found weaknesses and flagged count; per weakness: who found it (and fluxdrive's lower findings)."""
    result: dict[str, Any] = {"tools": {}, "weaknesses": [], "warnings": []}
    for name, run in runs.items():
        result["tools"][name] = tool = _tool_figures(run)
        if "error" in tool:
            continue
        flagged = [hit for hit in run["hits"] if hit.flagged]
        tool["found"] = sum(bool(weakness_hits(w, flagged)) for w in case.weaknesses)
        tool["weaknesses"] = len(case.weaknesses)
    for weakness in case.weaknesses:
        entry: dict[str, Any] = {
            "id": weakness.id,
            "cwe": weakness.cwe,
            "file": weakness.file,
            "lines": list(weakness.lines),
            "what": weakness.what,
            "found_by": {},
        }
        for name, run in runs.items():
            if "error" not in run:
                entry["found_by"][name] = weakness_hits(weakness, [hit for hit in run["hits"] if hit.flagged])
        if "hits" in runs.get("fluxdrive", {}):
            lower = [hit for hit in runs["fluxdrive"]["hits"] if not hit.flagged]
            entry["fluxdrive_lower"] = weakness_hits(weakness, lower)
        if checkout is not None:
            source = checkout / weakness.file
            if not source.is_file():
                result["warnings"].append(f"{weakness.id}: {weakness.file} is not in the tree at {case.commit[:12]}")
            else:
                count = len(source.read_text(encoding="utf-8", errors="replace").splitlines())
                if max(weakness.lines) > count:
                    result["warnings"].append(f"{weakness.id}: {weakness.file} has only {count} lines")
        result["weaknesses"].append(entry)
    return result


def code_lines(checkout: Path, target: Path) -> tuple[int, int]:
    """(files, non-blank lines) of the code files fluxdrive reviews under ``target``."""
    files = lines = 0
    for name in review_files(target, checkout):
        if Path(name).suffix.lower() not in CODE_SUFFIXES:
            continue
        path = checkout / name
        if path.is_symlink() or not path.is_file():
            continue
        files += 1
        text = path.read_text(encoding="utf-8", errors="replace")
        lines += sum(1 for line in text.splitlines() if line.strip())
    return files, lines


def label_of(hit: Hit, location: Location, project: str, labels: list[Label]) -> Label | None:
    """The closest label of the same project, tool, file and rule within +-2 lines, or None."""
    if location.start is None:
        return None
    if hit.tool == "bandit":  # "B602:subprocess_popen_with_shell_equals_true": the test id or its name
        rules = {hit.rule, *hit.rule.split(":")}
    else:
        rules = {name for rule in hit.rule.split(",") for name in _rule_names(rule)}
    candidates = []
    for label in labels:
        if label.project != project or label.tool != hit.tool:
            continue
        if not _rule_names(label.rule) & rules or not near(location, label.file, label.line, NEAR_LABEL):
            continue
        candidates.append((abs(label.line - location.start), label.line, label.real, label))
    return min(candidates, key=lambda c: c[:3])[3] if candidates else None


def score_healthy(case: Case, runs: dict[str, Any], lines: int, labels: list[Label]) -> dict[str, Any]:
    result: dict[str, Any] = {"tools": {}, "labels": {}}
    used: set[Label] = set()
    for name, run in runs.items():
        result["tools"][name] = tool = _tool_figures(run)
        if "error" in tool:
            continue
        flagged = [hit for hit in run["hits"] if hit.flagged]
        tool["per_100k"] = round(len(flagged) * 100_000 / lines, 2) if lines else None
        if name == "semgrep":
            continue  # no labels for semgrep's results: it is the comparison, not the product
        real = false = 0
        unlabelled = []
        for hit in flagged:
            for location in hit.locations or (Location("?"),):
                label = label_of(hit, location, case.name, labels)
                if label is None and hit.primary is not None and hit.primary != location:
                    label = label_of(hit, hit.primary, case.name, labels)  # the finding's label covers its places
                if label is None:
                    unlabelled.append(
                        {"severity": hit.severity, "rule": hit.rule, "location": str(location), "title": hit.title}
                    )
                    continue
                used.add(label)
                real, false = real + label.real, false + (not label.real)
        result["labels"][name] = {
            "real": real,
            "false": false,
            "unlabelled": unlabelled,
            "precision": round(real / (real + false), 4) if real + false else None,
        }
    stale = [label for label in labels if label.project == case.name and label not in used and label.tool in runs]
    result["stale_labels"] = [f"{lab.tool} {lab.rule} {lab.file}:{lab.line}" for lab in stale]
    return result


def run_case(case: Case, args: argparse.Namespace, tools: Toolbox, scratch: Path, *, healthy: bool,
             labels: list[Label]) -> dict[str, Any]:  # fmt: skip
    entry: dict[str, Any] = {
        "name": case.name,
        "repo": case.repo,
        "commit": case.commit,
        "license": case.license,
        "language": case.language,
        "kind": case.kind,
        "root": case.root,
    }
    checkout = scratch / case.name / "checkout"
    try:
        entry["absent_files"] = materialize(case, args.mirrors, checkout)
    except NotHereError as error:
        return {**entry, "status": "skipped", "reason": str(error)}
    except subprocess.CalledProcessError as error:
        said = (error.stderr or "").strip().splitlines()[-1:] or [f"{' '.join(error.cmd[:4])} failed"]
        return {**entry, "status": "skipped", "reason": f"could not extract it: {said[0]}"}
    target = checkout / case.root if case.root else checkout
    if not target.is_dir():
        return {**entry, "status": "failed", "reason": f"root {case.root!r} is not a directory at {case.commit[:12]}"}
    runs = _run_tools(case, checkout, scratch / case.name, tools)
    if healthy:
        files, lines = code_lines(checkout, target)
        entry.update(files=files, lines=lines, **score_healthy(case, runs, lines, labels))
    else:
        entry.update(score_vulnerable(case, runs, checkout))
    failed = runs["fluxdrive"].get("error")
    entry["status"] = "failed" if failed else "ok"
    if failed:
        entry["reason"] = failed
    shutil.rmtree(scratch / case.name, ignore_errors=True)
    return entry


# ---------------------------------------------------------------- totals


def languages_of(cases: Iterable[dict[str, Any]]) -> list[str]:
    """The languages of ``cases``, in LANGUAGES' order: the rows of every per-language table."""
    present = {case["language"] for case in cases}
    return [language for language in LANGUAGES if language in present]


def _vulnerable_cells(scored: list[dict[str, Any]], tools: list[str]) -> dict[str, Any]:
    """Case and weakness counts of ``scored``, and per tool: found, recall, cases with a find, flagged, seconds."""
    totals: dict[str, Any] = {"cases": len(scored), "weaknesses": sum(len(c["weaknesses"]) for c in scored)}
    for tool in tools:
        ran = [c["tools"][tool] for c in scored if "seconds" in c["tools"].get(tool, {})]
        if not ran:
            totals[tool] = None
            continue
        found, weaknesses = sum(t["found"] for t in ran), sum(t["weaknesses"] for t in ran)
        totals[tool] = {
            "found": found,
            "weaknesses": weaknesses,
            "recall": round(found / weaknesses, 4) if weaknesses else None,
            "cases_found": sum(t["found"] > 0 for t in ran),
            "flagged": sum(t["flagged"] for t in ran),
            "seconds": round(sum(t["seconds"] for t in ran), 2),
            "cases": len(ran),
        }
    return totals


def vulnerable_totals(cases: list[dict[str, Any]], tools: list[str]) -> dict[str, Any]:
    """Totals over the scored cases, per language and per CWE: a tool's column counts only cases where it ran."""
    scored = [c for c in cases if c["status"] == "ok"]
    totals = _vulnerable_cells(scored, tools)
    totals["by_language"] = {
        language: _vulnerable_cells([c for c in scored if c["language"] == language], tools)
        for language in languages_of(scored)
    }
    by_cwe: dict[str, dict[str, int]] = {}
    for case in scored:
        for weakness in case["weaknesses"]:
            cell = by_cwe.setdefault(weakness["cwe"], {"weaknesses": 0, **{t: 0 for t in tools}})
            cell["weaknesses"] += 1
            for tool in tools:
                cell[tool] += bool(weakness["found_by"].get(tool))
    totals["by_cwe"] = dict(sorted(by_cwe.items(), key=lambda kv: (-kv[1]["weaknesses"], int(kv[0][4:]))))
    return totals


def healthy_totals(projects: list[dict[str, Any]], tools: list[str]) -> dict[str, Any]:
    """Totals over the scored projects, and the same per language: a tool's column counts only projects it ran on."""
    scored = [p for p in projects if p["status"] == "ok"]
    totals = _healthy_cells(scored, tools)
    totals["by_language"] = {
        language: _healthy_cells([p for p in scored if p["language"] == language], tools)
        for language in languages_of(scored)
    }
    return totals


def _healthy_cells(scored: list[dict[str, Any]], tools: list[str]) -> dict[str, Any]:
    lines = sum(p["lines"] for p in scored)
    totals: dict[str, Any] = {"projects": len(scored), "lines": lines}
    for tool in tools:
        ran = [p for p in scored if "seconds" in p["tools"].get(tool, {})]
        if not ran:
            totals[tool] = None
            continue
        flagged = sum(p["tools"][tool]["flagged"] for p in ran)
        ran_lines = sum(p["lines"] for p in ran)
        cell: dict[str, Any] = {
            "flagged": flagged,
            "per_100k": round(flagged * 100_000 / ran_lines, 2) if ran_lines else None,
            "seconds": round(sum(p["tools"][tool]["seconds"] for p in ran), 2),
            "projects": len(ran),
        }
        if tool != "semgrep":
            real = sum(p["labels"][tool]["real"] for p in ran)
            false = sum(p["labels"][tool]["false"] for p in ran)
            cell.update(
                real=real,
                false=false,
                unlabelled=sum(len(p["labels"][tool]["unlabelled"]) for p in ran),
                precision=round(real / (real + false), 4) if real + false else None,
            )
        totals[tool] = cell
    return totals


def time_ratio(
    *groups: list[dict[str, Any]], against: str = "bandit", language: str = "python"
) -> dict[str, Any] | None:
    """fluxdrive's total wall time over ``against``'s, on the ``language`` cases where both ran (None: none did).

    By default the Python cases against bandit (issue 27: bandit reads only
    Python); issue 28 compares every language against semgrep, the same trees
    in the same run.
    """
    ours = theirs = 0.0
    cases = 0
    for group in groups:
        for case in group:
            tools = case.get("tools", {})
            if case["status"] != "ok" or case["language"] != language or "seconds" not in tools.get(against, {}):
                continue
            if "seconds" not in tools.get("fluxdrive", {}):
                continue
            ours += tools["fluxdrive"]["seconds"]
            theirs += tools[against]["seconds"]
            cases += 1
    if not theirs:
        return None
    return {
        "fluxdrive_seconds": round(ours, 2),
        f"{against}_seconds": round(theirs, 2),
        "ratio": round(ours / theirs, 3),
        "cases": cases,
    }


def time_by_language(*groups: list[dict[str, Any]]) -> dict[str, dict[str, Any] | None]:
    """fluxdrive / semgrep wall time per language, over both corpora (None where semgrep ran on no case)."""
    every = [case for group in groups for case in group if case["status"] == "ok"]
    return {language: time_ratio(*groups, against="semgrep", language=language) for language in languages_of(every)}


# ---------------------------------------------------------------- printing


def _cell(tool: dict[str, Any] | None, shown: Callable[[dict[str, Any]], str], width: int) -> str:
    if tool is None:
        return f"{'-':^{width}}"
    if "error" in tool:
        return f"{'error':^{width}}"
    return f"{shown(tool):>{width}}"


def print_vulnerable(result: dict[str, Any], tools: list[str]) -> None:
    cases, totals = result["cases"], result["totals"]
    print(
        f"Real vulnerable code: {totals['cases']} case(s) scored, {totals['weaknesses']} weaknesses; found = a flagged "
        f"result within +-{NEAR_WEAKNESS} lines of a weakness (fluxdrive P0/P1, bandit MEDIUM/HIGH, semgrep ERROR/WARNING)"
    )
    width = 22
    print(f"{'case':<24} {'kind':<4} {'language':<10} {'weak':>4} | " + " | ".join(f"{t:^{width}}" for t in tools))
    print(f"{'':<24} {'':<4} {'':<10} {'':>4} | " + " | ".join(f"{'found flagged   secs':>{width}}" for _ in tools))
    rule = "-" * (46 + (width + 3) * len(tools))
    print(rule)

    def shown(t: dict[str, Any]) -> str:
        return f"{t['found']:>3}/{t['weaknesses']:<3} {t['flagged']:>5} {t['seconds']:>7.1f}"

    for case in cases:
        if case["status"] == "skipped":
            continue
        if case["status"] == "failed" and "tools" not in case:
            print(f"{case['name']:<24} FAILED: {case['reason']}")
            continue
        row = " | ".join(_cell(case["tools"].get(t), shown, width) for t in tools)
        print(
            f"{case['name'][:24]:<24} {case['kind'][:4]:<4} {case['language']:<10} {len(case['weaknesses']):>4} | {row}"
        )
    print(rule)
    row = " | ".join(_cell(totals.get(t), shown, width) for t in tools)
    print(f"{'total':<24} {'':<4} {'':<10} {totals['weaknesses']:>4} | {row}")
    print_vulnerable_languages(totals.get("by_language", {}), tools)
    if totals["by_cwe"]:
        print()
        print(f"{'per CWE':<12} {'weak':>4} | " + " | ".join(f"{t:>9}" for t in tools))
        for cwe, cell in totals["by_cwe"].items():
            print(
                f"{cwe:<12} {cell['weaknesses']:>4} | "
                + " | ".join(f"{cell[t] if totals.get(t) else '-':>9}" for t in tools)
            )
    misses = [w for c in cases if c["status"] == "ok" for w in c["weaknesses"] if not w["found_by"].get("fluxdrive")]
    if misses:
        print()
        print(f"fluxdrive missed {len(misses)}:")
        for weakness in misses:
            lines = ",".join(str(n) for n in weakness["lines"])
            others = [t for t in tools if t != "fluxdrive" and weakness["found_by"].get(t)]
            print(f"  {weakness['id']} {weakness['cwe']} {weakness['file']}:{lines} - {weakness['what']}")
            if weakness.get("fluxdrive_lower"):
                print(f"      fluxdrive has there, below P1: {'; '.join(weakness['fluxdrive_lower'][:3])}")
            if others:
                print(f"      found by {', '.join(others)}: {weakness['found_by'][others[0]][0]}")
    for case in cases:
        for warning in case.get("warnings", []):
            print(f"  manifest warning: {case['name']}: {warning}")


def _recall(tool: dict[str, Any]) -> str:
    """``found/weak recall% cases-with-a-find/cases flagged seconds``: one tool's cell of the per-language table."""
    recall = "-" if tool["recall"] is None else f"{tool['recall'] * 100:.0f}%"
    return (
        f"{tool['found']:>3}/{tool['weaknesses']:<3} {recall:>6} {tool['cases_found']:>3}/{tool['cases']:<3}"
        f" {tool['flagged']:>7} {tool['seconds']:>7.1f}"
    )


def print_vulnerable_languages(by_language: dict[str, Any], tools: list[str]) -> None:
    """Per language: recall, cases where something was found, flagged results and seconds of each tool."""
    if not by_language:
        return
    width = 38
    under = f"{'found':^7} {'recall':>6} {'cases':^7} {'flagged':>7} {'secs':>7}"
    print()
    print(f"{'per language':<12} {'cases':>5} {'weak':>4} | " + " | ".join(f"{t:^{width}}" for t in tools))
    print(f"{'':<12} {'':>5} {'':>4} | " + " | ".join(under for _ in tools))
    for language, cell in by_language.items():
        row = " | ".join(_cell(cell.get(t), _recall, width) for t in tools)
        print(f"{language:<12} {cell['cases']:>5} {cell['weaknesses']:>4} | {row}")


def print_healthy_languages(by_language: dict[str, Any], tools: list[str]) -> None:
    """Per language: each tool's flagged count, per 100k lines, and seconds."""
    if not by_language:
        return
    width = 22

    def shown(t: dict[str, Any]) -> str:
        per = "-" if t["per_100k"] is None else f"{t['per_100k']:.1f}"
        return f"{t['flagged']:>5} {per:>7} {t['seconds']:>7.1f}"

    print()
    print(f"{'per language':<12} {'projects':>8} {'lines':>11} | " + " | ".join(f"{t:^{width}}" for t in tools))
    for language, cell in by_language.items():
        row = " | ".join(_cell(cell.get(t), shown, width) for t in tools)
        print(f"{language:<12} {cell['projects']:>8} {cell['lines']:>11,} | {row}")


def print_healthy(result: dict[str, Any], tools: list[str]) -> None:
    projects, totals = result["projects"], result["totals"]
    print(
        f"Healthy projects: {totals['projects']} scored, {totals['lines']:,} non-blank lines of code; flagged = fluxdrive "
        "P0/P1, bandit MEDIUM/HIGH, semgrep ERROR/WARNING (count, per 100k lines, seconds)"
    )
    width = 22
    print(f"{'project':<24} {'language':<10} {'lines':>9} | " + " | ".join(f"{t:^{width}}" for t in tools))
    rule = "-" * (47 + (width + 3) * len(tools))
    print(rule)

    def shown(t: dict[str, Any]) -> str:
        per = "-" if t["per_100k"] is None else f"{t['per_100k']:.1f}"
        return f"{t['flagged']:>5} {per:>7} {t['seconds']:>7.1f}"

    for project in projects:
        if project["status"] == "skipped":
            continue
        if "tools" not in project:
            print(f"{project['name']:<24} FAILED: {project['reason']}")
            continue
        row = " | ".join(_cell(project["tools"].get(t), shown, width) for t in tools)
        print(f"{project['name'][:24]:<24} {project['language']:<10} {project['lines']:>9,} | {row}")
    print(rule)
    row = " | ".join(_cell(totals.get(t), shown, width) for t in tools)
    print(f"{'total':<24} {'':<10} {totals['lines']:>9,} | {row}")
    print_healthy_languages(totals.get("by_language", {}), tools)
    for tool in (t for t in tools if t != "semgrep" and totals.get(t)):
        cell = totals[tool]
        precision = "-" if cell["precision"] is None else f"{cell['precision'] * 100:.0f}%"
        print(
            f"  hand-labelled {tool}: {cell['real']} real, {cell['false']} false, {cell['unlabelled']} UNLABELLED "
            f"-> precision {precision} of the labelled"
        )
    unlabelled = [
        (p["name"], item)
        for p in projects
        if p["status"] == "ok"
        for item in p["labels"].get("fluxdrive", {}).get("unlabelled", [])
    ]
    if unlabelled:
        print()
        print(f"UNLABELLED fluxdrive P0/P1 ({len(unlabelled)}; label them in bench/realcode/healthy.yaml):")
        for name, item in unlabelled:
            print(f"  {name} {item['severity']} {item['rule']} {item['location']}: {item['title'][:110]}")
    stale = [(p["name"], s) for p in projects if p["status"] == "ok" for s in p.get("stale_labels", [])]
    if stale:
        print(
            f"  {len(stale)} label(s) matched nothing this run (fixed, or moved): "
            + "; ".join(f"{n} {s}" for n, s in stale[:5])
        )


def print_report(report: dict[str, Any]) -> None:
    tools = report["tools"]
    versions = report["versions"].items()
    print("versions: " + ", ".join(v if v.startswith(name) else f"{name} {v}" for name, v in versions))
    for note in report["notes"]:
        print(f"note: {note}")
    if "vulnerable" in report:
        print()
        print_vulnerable(report["vulnerable"], tools)
    if "healthy" in report:
        print()
        print_healthy(report["healthy"], tools)
    ratio = report["time"]
    print()
    if ratio is None:
        print("time: bandit did not run on any Python case; no fluxdrive / bandit ratio")
    else:
        print(
            f"time: fluxdrive {ratio['fluxdrive_seconds']:.1f} s, bandit {ratio['bandit_seconds']:.1f} s on the same "
            f"Python cases -> fluxdrive / bandit = {ratio['ratio']:.2f}"
        )
    for language, ratio in report.get("time_by_language", {}).items():
        if ratio is None:
            print(f"time {language}: semgrep did not run on any {language} case; no fluxdrive / semgrep ratio")
            continue
        print(
            f"time {language}: fluxdrive {ratio['fluxdrive_seconds']:.1f} s, semgrep {ratio['semgrep_seconds']:.1f} s "
            f"on the same {ratio['cases']} case(s) -> fluxdrive / semgrep = {ratio['ratio']:.2f}"
        )
    every = [c for group, key in GROUPS if group in report for c in report[group][key]]
    skipped = [c for c in every if c["status"] == "skipped"]
    failed = [c for c in every if c["status"] == "failed"]
    for case in every:
        if case.get("absent_files"):
            absent = case["absent_files"]
            print(f"note: {case['name']}: {len(absent)} file(s) absent from the mirror left out ({absent[0]}, ...)")
    for case in skipped:
        print(f"skipped: {case['name']}: {case['reason']}")
    for case in failed:
        print(f"FAILED: {case['name']}: {case['reason']}")


# ---------------------------------------------------------------- main


def _select(cases: list[Case], only: list[str], language: str) -> list[Case]:
    chosen = [c for c in cases if (not only or c.name in only) and (language == "all" or c.language == language)]
    return chosen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="fluxdrive, bandit and semgrep on real vulnerable code and on healthy projects (issue 27)."
    )
    parser.add_argument("--mirrors", type=Path, default=MIRRORS, help="folder of OWNER+NAME/repo git mirrors")
    parser.add_argument("--vulnerable", type=Path, default=VULNERABLE, help="the vulnerable corpus manifest")
    parser.add_argument("--healthy", type=Path, default=HEALTHY, help="the healthy corpus manifest")
    parser.add_argument("--corpus", choices=("vulnerable", "healthy", "both"), default="both")
    parser.add_argument("--only", action="append", default=[], metavar="NAME", help="only this case (repeatable)")
    parser.add_argument(
        "--language",
        choices=(*LANGUAGES, "all"),
        help="only cases in this language (default: python for the vulnerable corpus, all for the healthy one)",
    )
    parser.add_argument("--skip", action="append", choices=("bandit", "semgrep"), help="do not run this tool")
    parser.add_argument("--bandit", help="the bandit executable (default: the one beside this Python)")
    parser.add_argument("--semgrep", help="the semgrep executable (default: .venv-bench's, then PATH)")
    parser.add_argument(
        "--cache",
        type=Path,
        default=Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "fluxdrive-bench",
        help="where semgrep-rules' rule directories are extracted",
    )
    parser.add_argument("--list-sources", action="store_true", help="print the fetch sources the cases need and exit")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    try:
        report = _run(args)
    except UsageError as error:
        print(f"bench/realcode.py: {error}", file=sys.stderr)
        return 2
    if report is None:
        return 0
    print_report(report)
    if args.json is not None:
        atomic_write_text(args.json, json.dumps(report, indent=2, sort_keys=True) + "\n")
        print(f"\nfigures written to {args.json}")
    groups = [report[group][key] for group, key in GROUPS if group in report]
    return 1 if any(c["status"] == "failed" for group in groups for c in group) else 0


def _drop_idle_bandit(tools: Toolbox, cases: list[Case]) -> None:
    """bandit reads only Python: with no Python case selected its empty column would read as "found nothing"."""
    if tools.bandit is not None and not any(case.language == "python" for case in cases):
        tools.bandit = None
        tools.versions.pop("bandit", None)
        tools.notes.append("bandit: reads only Python, and no Python case is selected")


def _run(args: argparse.Namespace) -> dict[str, Any] | None:
    if args.json is not None and not args.json.resolve().parent.is_dir():
        raise UsageError(f"{args.json}: its directory does not exist")
    if args.bandit is not None and shutil.which(args.bandit) is None:
        raise UsageError(f"{args.bandit}: no such bandit executable")
    if args.semgrep is not None and shutil.which(args.semgrep) is None:
        raise UsageError(f"{args.semgrep}: no such semgrep executable")
    corpora = ("vulnerable", "healthy") if args.corpus == "both" else (args.corpus,)
    vulnerable: list[Case] = []
    healthy: list[Case] = []
    labels: list[Label] = []
    for corpus in corpora:
        path: Path = getattr(args, corpus)
        if not path.is_file():
            if path in (VULNERABLE, HEALTHY):
                print(
                    f"bench/realcode.py: {path.relative_to(REPO)} not written yet, that corpus is skipped",
                    file=sys.stderr,
                )
                continue
            raise UsageError(f"{path}: no such manifest")
        if corpus == "vulnerable":
            vulnerable = _select(load_vulnerable(path), args.only, args.language or "python")
        else:
            projects, labels = load_healthy(path)
            healthy = _select(projects, args.only, args.language or "all")
    known = {c.name for c in vulnerable + healthy}
    unknown = [name for name in args.only if name not in known]
    if unknown:
        raise UsageError(f"--only {unknown[0]}: no such case in the manifests (for this --language)")
    if args.list_sources:
        sources = sorted({c.source for c in vulnerable + healthy} | {f"github:{RULES_REPO}"})
        print("\n".join(sources))
        return None
    if not args.mirrors.is_dir():
        if args.mirrors == MIRRORS:  # as in `make bench` on a machine without mirrors: nothing to score
            print(f"bench/realcode.py: skipped (no mirrors in {MIRRORS}: fetch the sources --list-sources prints)")
            return None
        raise UsageError(f"{args.mirrors}: no such mirrors folder")
    args.mirrors, args.cache = args.mirrors.resolve(), args.cache.resolve()  # git -C runs elsewhere
    tools = toolbox(args)
    _drop_idle_bandit(tools, vulnerable + healthy)
    names = ["fluxdrive"] + [t for t in ("bandit", "semgrep") if getattr(tools, t) is not None]
    report: dict[str, Any] = {"versions": tools.versions, "notes": tools.notes, "tools": names}
    with tempfile.TemporaryDirectory(prefix="fluxdrive-realcode-") as tmp:
        scratch = Path(tmp)
        if "vulnerable" in corpora:
            done = [run_case(c, args, tools, scratch, healthy=False, labels=[]) for c in vulnerable]
            report["vulnerable"] = {
                "cases": done,
                "totals": vulnerable_totals(done, names),
            }
        if "healthy" in corpora:
            done = [run_case(p, args, tools, scratch, healthy=True, labels=labels) for p in healthy]
            report["healthy"] = {
                "projects": done,
                "totals": healthy_totals(done, names),
            }
    groups = [report[group][key] for group, key in GROUPS if group in report]
    report["time"] = time_ratio(*groups)
    report["time_by_language"] = time_by_language(*groups)
    return report


if __name__ == "__main__":
    sys.exit(main())
