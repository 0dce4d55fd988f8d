"""Score fluxdrive's default offline review on OWASP BenchmarkPython and DVPWA, with bandit beside it.

Run: ``.venv/bin/python bench/security.py PATH_TO_BENCHMARKPYTHON [--dvpwa PATH] [--bandit BANDIT] [--json OUT]``.
Nothing is downloaded: PATH is a BenchmarkPython checkout (its
``expectedresults-0.1.csv``, ``testcode/BenchmarkTestNNNNN.py`` and
``helpers/``), ``--dvpwa`` a checkout of anxolerd/dvpwa. Without PATH (as in
``make bench``) the benchmark prints that it was skipped and exits 0.

**BenchmarkPython, even-numbered cases only.** The odd-numbered cases are
held out for independent scoring: their numbers are dropped from the expected
results before any case file is touched, and only the even cases' files are
copied (with ``helpers/``, ``app.py``, ``requirements.txt`` and any non-case
file in ``testcode/``) into a temporary project. The odd files are never
opened, copied or run. Then, on that project:

- fluxdrive, the way a user runs it: ``fluxdrive review DIR --yes`` (static
  runtime, the default agents, output in a temporary directory), once. A case
  is *flagged* when a P0 or P1 finding of ``findings.json`` has a location
  (any entry of ``locations`` when the field is there, else ``location``) in
  that case's file.
- bandit, when installed (``bandit -r DIR -f json -q``): a case is flagged
  when an issue with ``issue_severity`` MEDIUM or HIGH is in its file - the
  analogue of P0/P1; the overall figures with issues of any severity are
  printed too.
- semgrep, only when it is on PATH and ``--semgrep-config`` names a local
  rule file or directory (the registry's rule packs would be a download);
  results of severity ERROR or WARNING flag a case. Otherwise a note says it
  was skipped.

Scoring is OWASP's: per category TP/FN/FP/TN, TPR = TP/(TP+FN),
FPR = FP/(FP+TN), Youden J = TPR - FPR; overall both the micro figures (all
cases pooled) and the OWASP scorecard's average of the per-category TPR, FPR
and J. Budget (ARCHITECTURE.md): average J >= 0.5, ahead of bandit and semgrep.
A second table scores the same runs the way OWASP's own scorecard does: a
case counts as flagged only by a finding that names the case's CWE (the
``cwe`` of findings.json, bandit's ``issue_cwe``, semgrep's metadata; CWE-327
and CWE-328, CWE-94 and CWE-95, CWE-79 and CWE-80 count as one weakness), so
a real XSS reported in a file labelled "not an XPath injection" is not a
false positive there.

**DVPWA.** ``bench/security/dvpwa.yaml`` is the ground truth, written from
dvpwa's README and code before any tool ran on it: each vulnerability with
its CWE, file and line ranges, and a regular expression saying what a finding
about it must mention. The checkout is copied to a temporary project and
reviewed the same way. A vulnerability is *found* by fluxdrive when a P0, P1
or P2 finding has a location in one of its files within a line range and its
rule ids or title match the expression; by bandit when an issue of any
severity does (test id, name, text or CWE matching). Every fluxdrive P0/P1
finding, and every bandit MEDIUM/HIGH issue, that matches no listed
vulnerability is printed as "other" with its rule and location, so a reader
can judge whether it is a false positive.

Exit codes: 0 success, 2 a bad path or argument (one line on stderr), 1 a tool
that did not produce its report.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
DVPWA_TRUTH = HERE / "security" / "dvpwa.yaml"
EXPECTED = "expectedresults-0.1.csv"
CASE_NAME = re.compile(r"BenchmarkTest(\d{5})")
CASE_FILE = re.compile(r"(?:^|/)testcode/BenchmarkTest(\d{5})\.py$")
# Non-case files the cases need (they import helpers.*) or that tell what the project is.
SUPPORT = ("helpers", "app.py", "requirements.txt")
MORE_PLACES = re.compile(r"\(and (\d+) more places?\)")
FLUX_FLAG = frozenset({"P0", "P1"})
FLUX_FOUND = frozenset({"P0", "P1", "P2"})
BANDIT_FLAG = frozenset({"MEDIUM", "HIGH"})
BANDIT_ANY = frozenset({"LOW", "MEDIUM", "HIGH"})


class UsageError(Exception):
    """A bad path or argument: one line, exit 2."""


class ToolError(Exception):
    """A tool ran but left no readable report: one line, exit 1."""


# ---------------------------------------------------------------- locations


@dataclass(frozen=True)
class Location:
    path: str  # relative to the project, forward slashes
    start: int | None = None
    end: int | None = None

    def __str__(self) -> str:
        if self.start is None:
            return self.path
        return f"{self.path}:{self.start}" + (f"-{self.end}" if self.end not in (None, self.start) else "")


_LOCATION = re.compile(r"^(?P<path>.*?):(?P<start>\d+)(?:-(?P<end>\d+)|:\d+)?$")


def _relative(path: str, root: Path) -> str:
    text = path.replace("\\", "/")
    if text.startswith("/"):
        try:
            text = Path(text).resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            return text
    while text.startswith("./"):
        text = text[2:]
    return text


def parse_location(text: str, root: Path) -> Location:
    """``path``, ``path:12``, ``path:12-14`` or ``path:12:5`` (a column) as a Location."""
    found = _LOCATION.match(text.strip())
    if found is None:
        return Location(_relative(text.strip(), root))
    start = int(found["start"])
    end = int(found["end"]) if found["end"] else start
    return Location(_relative(found["path"], root), start, end)


def finding_locations(finding: dict[str, Any], root: Path) -> list[Location]:
    """Every location of a findings.json finding: ``locations`` when present, else ``location``."""
    raw = finding.get("locations")
    if not isinstance(raw, list) or not raw:
        single = finding.get("location")
        raw = [single] if single else []
    return [parse_location(str(item), root) for item in raw if item]


# ---------------------------------------------------------------- running the tools


@dataclass
class Run:
    tool: str
    seconds: float
    items: list[dict[str, Any]] = field(default_factory=list)
    note: str = ""


def _executable(name: str) -> str | None:
    return shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)


def run_fluxdrive(project: Path, scratch: Path) -> Run:
    """``fluxdrive review PROJECT --yes`` with the static runtime; its findings.json findings."""
    command = _executable("fluxdrive")
    base = [command] if command else [sys.executable, "-m", "fluxdrive"]
    output = scratch / f"fluxdrive-{project.name}"
    args = [*base, "review", str(project), "--yes", "--runtime", "static", "--output-dir", str(output), "-q"]
    started = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    report = output / "findings.json"
    if done.returncode not in (0, 1) or not report.is_file():
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise ToolError(f"fluxdrive review {project.name} exited {done.returncode}: {tail[0]}")
    data = json.loads(report.read_text(encoding="utf-8"))
    return Run("fluxdrive", seconds, list(data.get("findings", [])), f"verdict {data.get('verdict')}")


def run_bandit(project: Path, command: str | None = None) -> Run | None:
    """``bandit -r PROJECT -f json -q``; None when bandit is not installed.

    ``command`` is a bandit to use instead of the one installed beside this
    Python: bandit parses with its own interpreter, so one installed under
    Python 3.12+ reads the cases written with PEP 701 f-strings that a 3.11
    bandit reports as unparseable.
    """
    command = command or _executable("bandit")
    if command is None:
        return None
    started = time.perf_counter()
    done = subprocess.run(
        [command, "-r", str(project), "-f", "json", "-q"], capture_output=True, text=True, check=False
    )
    seconds = time.perf_counter() - started
    try:
        data = json.loads(done.stdout)
    except json.JSONDecodeError as error:
        raise ToolError(f"bandit exited {done.returncode} without a JSON report ({error})") from None
    skipped = len(data.get("errors", []))
    return Run("bandit", seconds, list(data.get("results", [])), f"{skipped} file(s) bandit could not parse")


def run_semgrep(project: Path, config: Path | None) -> tuple[Run | None, str]:
    """semgrep with a local rule set, or None and why it was skipped."""
    command = shutil.which("semgrep")
    if command is None:
        return None, "semgrep: not on PATH, skipped"
    if config is None:
        return None, "semgrep: on PATH but no --semgrep-config (its registry rules would be a download), skipped"
    args = [command, "scan", "--config", str(config), "--json", "--metrics", "off", "--quiet", str(project)]
    started = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    try:
        data = json.loads(done.stdout)
    except json.JSONDecodeError:
        return None, f"semgrep: exited {done.returncode} without a JSON report, skipped"
    return Run("semgrep", seconds, list(data.get("results", []))), ""


# What each tool's item says about itself: (locations, severity, text for dvpwa's match).


def flux_view(item: dict[str, Any], root: Path) -> tuple[list[Location], str, str]:
    rules = " ".join(str(rule) for rule in item.get("rules", []) or [])
    return finding_locations(item, root), str(item.get("severity", "")), f"{rules} {item.get('title', '')}"


def bandit_view(item: dict[str, Any], root: Path) -> tuple[list[Location], str, str]:
    path = _relative(str(item.get("filename", "")), root)
    lines = [int(n) for n in item.get("line_range") or [] if isinstance(n, int)] or [int(item.get("line_number", 0))]
    cwe = (item.get("issue_cwe") or {}).get("id")
    text = f"{item.get('test_id', '')} {item.get('test_name', '')} {item.get('issue_text', '')} CWE-{cwe}"
    return [Location(path, min(lines), max(lines))], str(item.get("issue_severity", "")).upper(), text


def semgrep_view(item: dict[str, Any], root: Path) -> tuple[list[Location], str, str]:
    path = _relative(str(item.get("path", "")), root)
    start = int((item.get("start") or {}).get("line", 0))
    end = int((item.get("end") or {}).get("line", start))
    extra = item.get("extra") or {}
    return (
        [Location(path, start, end)],
        str(extra.get("severity", "")).upper(),
        f"{item.get('check_id', '')} {extra.get('message', '')}",
    )


VIEWS = {"fluxdrive": flux_view, "bandit": bandit_view, "semgrep": semgrep_view}
_CWE_NUMBER = re.compile(r"CWE-0*(\d+)", re.IGNORECASE)
# CWEs a scorer counts as naming the same weakness (OWASP's expected CWE first): a weak hash is
# reported as CWE-327 (broken algorithm) or CWE-328 (weak hash), eval as CWE-94 or CWE-95.
SAME_WEAKNESS = {"328": {"327", "328", "916"}, "94": {"94", "95"}, "79": {"79", "80"}}


def item_cwes(tool: str, item: dict[str, Any]) -> set[str]:
    """The CWE numbers a tool's item names: findings.json ``cwe``, bandit's ``issue_cwe``, semgrep's metadata."""
    if tool == "fluxdrive":
        texts = [str(c) for c in item.get("cwe") or []]
    elif tool == "bandit":
        texts = [f"CWE-{(item.get('issue_cwe') or {}).get('id')}"]
    else:
        cwe = ((item.get("extra") or {}).get("metadata") or {}).get("cwe") or []
        texts = [str(c) for c in (cwe if isinstance(cwe, list) else [cwe])]
    return {m[1] for text in texts for m in _CWE_NUMBER.finditer(text)}


FLAGGING = {"fluxdrive": FLUX_FLAG, "bandit": BANDIT_FLAG, "semgrep": frozenset({"ERROR", "WARNING"})}


# ---------------------------------------------------------------- BenchmarkPython


@dataclass(frozen=True)
class Case:
    number: int
    category: str
    vulnerable: bool
    cwe: str

    @property
    def file(self) -> str:
        return f"testcode/BenchmarkTest{self.number:05d}.py"


def even_cases(checkout: Path) -> list[Case]:
    """The expected results of the even-numbered cases; odd rows are dropped here, unread beyond their number."""
    cases = []
    with (checkout / EXPECTED).open(encoding="utf-8", newline="") as handle:
        for row in csv.reader(handle):
            if not row or row[0].lstrip().startswith("#"):
                continue
            name = CASE_NAME.fullmatch(row[0].strip())
            if name is None or int(name[1]) % 2:
                continue
            if len(row) < 4:
                raise UsageError(f"{checkout / EXPECTED}: malformed row for {row[0].strip()}")
            cases.append(Case(int(name[1]), row[1].strip(), row[2].strip().lower() == "true", row[3].strip()))
    return cases


def stage_benchmark(checkout: Path, cases: list[Case], project: Path) -> list[str]:
    """Copy the even case files and the non-case support files into ``project``; the even files that were missing."""
    (project / "testcode").mkdir(parents=True)
    for name in SUPPORT:
        source = checkout / name
        if source.is_dir():
            shutil.copytree(source, project / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        elif source.is_file():
            shutil.copy2(source, project / name)
    testcode = checkout / "testcode"
    for entry in sorted(testcode.iterdir()):  # names only: a case file is never opened here
        if CASE_NAME.match(entry.name):
            continue
        if entry.is_dir():
            shutil.copytree(
                entry, project / "testcode" / entry.name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
            )
        elif entry.is_file():
            shutil.copy2(entry, project / "testcode" / entry.name)
    missing = []
    for case in cases:
        source = checkout / case.file
        if source.is_file():
            shutil.copy2(source, project / case.file)
        else:
            missing.append(case.file)
    return missing


def flagged_cases(
    run: Run, root: Path, severities: frozenset[str], expected_cwe: dict[int, str] | None = None
) -> set[int]:
    """Case numbers with an item of one of ``severities`` in their file.

    With ``expected_cwe`` (case number -> OWASP's CWE) the item must also name
    that CWE (or one in :data:`SAME_WEAKNESS`): the OWASP scorecard's method.
    """
    view = VIEWS[run.tool]
    flagged: set[int] = set()
    for item in run.items:
        locations, severity, _ = view(item, root)
        if severity not in severities:
            continue
        cwes = item_cwes(run.tool, item) if expected_cwe is not None else set()
        for location in locations:
            found = CASE_FILE.search(location.path)
            if found is None:
                continue
            number = int(found[1])
            if expected_cwe is not None:
                wanted = expected_cwe.get(number, "")
                if not cwes & SAME_WEAKNESS.get(wanted, {wanted}):
                    continue
            flagged.add(number)
    return flagged


def undercounted(run: Run, root: Path) -> tuple[int, int]:
    """P0/P1 findings whose title says "(and N more places)" but that list fewer than N+1 locations; places unlisted."""
    findings = places = 0
    for item in run.items:
        more = MORE_PLACES.search(str(item.get("title", "")))
        if item.get("severity") not in FLUX_FLAG or not more:
            continue
        short = int(more[1]) + 1 - len(finding_locations(item, root))
        if short > 0:
            findings, places = findings + 1, places + short
    return findings, places


@dataclass
class Score:
    tp: int = 0
    fn: int = 0
    fp: int = 0
    tn: int = 0

    @property
    def tpr(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def fpr(self) -> float:
        return self.fp / (self.fp + self.tn) if self.fp + self.tn else 0.0

    @property
    def j(self) -> float:
        return self.tpr - self.fpr

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "tpr": round(self.tpr, 4), "fpr": round(self.fpr, 4), "j": round(self.j, 4)}


def score(cases: list[Case], flagged: set[int]) -> dict[str, Any]:
    """Per category and overall (micro, and the OWASP average of the per-category figures)."""
    categories: dict[str, Score] = {}
    for case in cases:
        cell = categories.setdefault(case.category, Score())
        hit = case.number in flagged
        if case.vulnerable:
            cell.tp, cell.fn = cell.tp + hit, cell.fn + (not hit)
        else:
            cell.fp, cell.tn = cell.fp + hit, cell.tn + (not hit)
    micro = Score(*(sum(getattr(s, k) for s in categories.values()) for k in ("tp", "fn", "fp", "tn")))
    n = len(categories) or 1
    average = {
        "tpr": round(sum(s.tpr for s in categories.values()) / n, 4),
        "fpr": round(sum(s.fpr for s in categories.values()) / n, 4),
        "j": round(sum(s.j for s in categories.values()) / n, 4),
    }
    return {
        "categories": {name: categories[name].as_dict() for name in sorted(categories)},
        "micro": micro.as_dict(),
        "average": average,
    }


def _view(run: Run, rule: str, cases: list[Case], flagged: set[int]) -> dict[str, Any]:
    """One column of the table: a tool's time, what counts as flagged, and the scores."""
    return {"seconds": round(run.seconds, 2), "rule": rule, **score(cases, flagged)}


def benchmark_python(
    checkout: Path, scratch: Path, semgrep_config: Path | None, bandit_command: str | None = None
) -> dict[str, Any]:
    cases = even_cases(checkout)
    if not cases:
        raise UsageError(f"{checkout / EXPECTED}: no even-numbered BenchmarkTest cases listed")
    project = scratch / "benchmarkpython-even"
    missing = stage_benchmark(checkout, cases, project)
    cases = [case for case in cases if case.file not in set(missing)]
    result: dict[str, Any] = {
        "checkout": str(checkout),
        "commit": _git_commit(checkout),
        "cases": len(cases),
        "vulnerable": sum(case.vulnerable for case in cases),
        "missing_even_files": missing,
        "staged_case_files": sorted(p.name for p in (project / "testcode").glob("BenchmarkTest*.py")),
        "tools": {},
        "notes": [],
    }
    expected_cwe = {case.number: case.cwe.lstrip("0") for case in cases}
    flux = run_fluxdrive(project, scratch)
    result["tools"]["fluxdrive"] = {
        "seconds": round(flux.seconds, 2),
        "rule": "a P0 or P1 finding located in the case's file",
        **score(cases, flagged_cases(flux, project, FLUX_FLAG)),
    }
    cwe_views = {
        "fluxdrive cwe": {
            "seconds": round(flux.seconds, 2),
            "rule": "a P0 or P1 finding in the case's file naming the case's CWE (OWASP scorecard method)",
            **score(cases, flagged_cases(flux, project, FLUX_FLAG, expected_cwe)),
        }
    }
    short, unlisted = undercounted(flux, project)
    result["unlisted_places"] = unlisted
    if short:
        result["notes"].append(
            f"{short} fluxdrive P0/P1 finding(s) say '(and N more places)' but findings.json lists {unlisted} of "
            "those places nowhere: they are not counted"
        )
    bandit = run_bandit(project, bandit_command)
    if bandit is None:
        result["notes"].append("bandit: not installed, skipped")
    else:
        result["tools"]["bandit"] = {
            "seconds": round(bandit.seconds, 2),
            "rule": "an issue of severity MEDIUM or HIGH in the case's file",
            "parse_errors": bandit.note,
            **score(cases, flagged_cases(bandit, project, BANDIT_FLAG)),
        }
        result["tools"]["bandit any-sev"] = _view(
            bandit, "an issue of any severity in the case's file", cases, flagged_cases(bandit, project, BANDIT_ANY)
        )
        cwe_views["bandit cwe"] = _view(
            bandit,
            "an issue of any severity in the case's file naming the case's CWE",
            cases,
            flagged_cases(bandit, project, BANDIT_ANY, expected_cwe),
        )
    semgrep, note = run_semgrep(project, semgrep_config)
    if semgrep is None:
        result["notes"].append(note)
    else:
        result["tools"]["semgrep"] = _view(
            semgrep,
            "a result of severity ERROR or WARNING in the case's file",
            cases,
            flagged_cases(semgrep, project, FLAGGING["semgrep"]),
        )
        every = BANDIT_ANY | {"INFO", "ERROR", "WARNING"}
        cwe_views["semgrep cwe"] = _view(
            semgrep,
            "a result of any severity in the case's file naming the case's CWE",
            cases,
            flagged_cases(semgrep, project, every, expected_cwe),
        )
    result["tools"].update(cwe_views)
    return result


# ---------------------------------------------------------------- DVPWA


def _git_commit(path: Path) -> str | None:
    if shutil.which("git") is None:
        return None
    done = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True, check=False)
    top = subprocess.run(
        ["git", "-C", str(path), "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=False
    )
    if done.returncode or top.returncode or Path(top.stdout.strip()).resolve() != path.resolve():
        return None  # not a checkout of its own (maybe a folder inside another repository)
    return done.stdout.strip()


def load_truth(path: Path = DVPWA_TRUTH) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    for vuln in data["vulnerabilities"]:
        vuln["pattern"] = re.compile(vuln["match"], re.IGNORECASE)
    return data


def _hits(vuln: dict[str, Any], locations: list[Location], text: str) -> bool:
    if not vuln["pattern"].search(text):
        return False
    for place in vuln["locations"]:
        low, high = place["lines"]
        for location in locations:
            if location.path == place["file"] and location.start is not None:
                end = location.end if location.end is not None else location.start
                if location.start <= high and end >= low:
                    return True
    return False


def score_dvpwa(run: Run, truth: dict[str, Any], root: Path, found_severities: frozenset[str]) -> dict[str, Any]:
    view = VIEWS[run.tool]
    items = [view(item, root) for item in run.items]
    found: dict[str, list[str]] = {}
    for vuln in truth["vulnerabilities"]:
        found[vuln["id"]] = [
            f"{severity} {_rule_of(run.tool, item)} {locations[0]}"
            for item, (locations, severity, text) in zip(run.items, items, strict=True)
            if severity in found_severities and _hits(vuln, locations, text)
        ]
    others = []
    for item, (locations, severity, text) in zip(run.items, items, strict=True):
        if severity not in FLAGGING[run.tool]:
            continue
        if any(_hits(vuln, locations, text) for vuln in truth["vulnerabilities"]):
            continue
        others.append(
            {
                "severity": severity,
                "rule": _rule_of(run.tool, item),
                "locations": [str(location) for location in locations],
                "title": _title_of(run.tool, item),
            }
        )
    readme = [v for v in truth["vulnerabilities"] if v["source"] == "readme"]
    return {
        "seconds": round(run.seconds, 2),
        "vulnerabilities": {
            v["id"]: {"cwe": v["cwe"], "source": v["source"], "found": bool(found[v["id"]]), "by": found[v["id"]]}
            for v in truth["vulnerabilities"]
        },
        "found_readme": sum(bool(found[v["id"]]) for v in readme),
        "readme_total": len(readme),
        "found_all": sum(bool(hits) for hits in found.values()),
        "total": len(truth["vulnerabilities"]),
        "other_flagged": others,
    }


def _rule_of(tool: str, item: dict[str, Any]) -> str:
    if tool == "fluxdrive":
        return ",".join(str(rule) for rule in item.get("rules", []) or []) or str(item.get("id", ""))
    if tool == "bandit":
        return f"{item.get('test_id', '')}:{item.get('test_name', '')}"
    return str(item.get("check_id", ""))


def _title_of(tool: str, item: dict[str, Any]) -> str:
    if tool == "fluxdrive":
        return str(item.get("title", ""))
    if tool == "bandit":
        return str(item.get("issue_text", ""))
    return str((item.get("extra") or {}).get("message", ""))


def dvpwa(checkout: Path, scratch: Path, bandit_command: str | None = None) -> dict[str, Any]:
    truth = load_truth()
    project = scratch / "dvpwa"
    shutil.copytree(checkout, project, ignore=shutil.ignore_patterns(".git", ".fluxdrive", "__pycache__", "*.pyc"))
    commit = _git_commit(checkout)
    result: dict[str, Any] = {
        "checkout": str(checkout),
        "commit": commit,
        "truth_commit": truth["commit"],
        "tools": {},
        "notes": [],
    }
    if commit is None:
        result["notes"].append(f"not a git checkout: its commit is unknown; the ground truth is for {truth['commit']}")
    elif commit != truth["commit"]:
        result["notes"].append(f"checkout is at {commit}, the ground truth was written for {truth['commit']}")
    flux = run_fluxdrive(project, scratch)
    result["tools"]["fluxdrive"] = {
        "rule": "found: a P0/P1/P2 finding in a listed file and line range whose rules or title match; other: P0/P1",
        **score_dvpwa(flux, truth, project, FLUX_FOUND),
    }
    bandit = run_bandit(project, bandit_command)
    if bandit is None:
        result["notes"].append("bandit: not installed, skipped")
    else:
        result["tools"]["bandit"] = {
            "rule": "found: an issue of any severity in a listed file and line range whose id, name, text or CWE match; "
            "other: MEDIUM/HIGH",
            **score_dvpwa(bandit, truth, project, BANDIT_ANY),
        }
    return result


# ---------------------------------------------------------------- printing


def _fmt(cell: dict[str, Any] | None) -> str:
    if cell is None:
        return f"{'-':>6} {'-':>6} {'-':>6}"
    return f"{cell['tpr'] * 100:5.1f}% {cell['fpr'] * 100:5.1f}% {cell['j'] * 100:+6.1f}"


def print_benchmark(result: dict[str, Any]) -> None:
    tools = result["tools"]
    print(
        f"OWASP BenchmarkPython, even-numbered cases: {result['cases']} cases ({result['vulnerable']} real vulnerabilities)"
    )
    print(f"  checkout {result['checkout']}" + (f" at {result['commit']}" if result["commit"] else ""))
    if result["missing_even_files"]:
        print(f"  {len(result['missing_even_files'])} even case file(s) listed but missing: not scored")
    by_file = [n for n in tools if not n.endswith(" cwe")]
    by_cwe = [n for n in tools if n.endswith(" cwe")]
    _print_table(result, by_file)
    names = by_file
    for name in names:
        micro = tools[name]["micro"]
        print(
            f"  {name}: TP {micro['tp']} FN {micro['fn']} FP {micro['fp']} TN {micro['tn']}; "
            f"average J {tools[name]['average']['j']:+.3f}; {tools[name]['seconds']:.1f} s"
            + (f" ({tools[name]['parse_errors']})" if tools[name].get("parse_errors") else "")
        )
    verdict = "met" if tools["fluxdrive"]["average"]["j"] >= 0.5 else "NOT met"
    others = [tools[n]["average"]["j"] for n in names if n != "fluxdrive" and "any-sev" not in n]
    ahead = all(tools["fluxdrive"]["average"]["j"] > j for j in others)
    print(f"  budget: fluxdrive average J >= 0.5: {verdict}; ahead of the other tools: {'yes' if ahead else 'no'}")
    if by_cwe:
        print()
        print("The same cases scored the OWASP scorecard's way (the finding must name the case's CWE):")
        _print_table(result, by_cwe)
    for note in result["notes"]:
        print(f"  note: {note}")


def _print_table(result: dict[str, Any], names: list[str]) -> None:
    tools = result["tools"]
    for name in names:
        print(f"  {name}: {tools[name]['rule']}")
    header = f"{'category':<16} {'cases':>5} {'real':>4} | " + " | ".join(f"{n[:20]:^20}" for n in names)
    sub = f"{'':<16} {'':>5} {'':>4} | " + " | ".join(f"{'TPR':>6} {'FPR':>6} {'J':>6}" for _ in names)
    print(header)
    print(sub)
    print("-" * len(sub))
    first = tools[names[0]]["categories"]
    for category in first:
        cell = first[category]
        total = cell["tp"] + cell["fn"] + cell["fp"] + cell["tn"]
        real = cell["tp"] + cell["fn"]
        row = " | ".join(_fmt(tools[n]["categories"].get(category)) for n in names)
        print(f"{category:<16} {total:>5} {real:>4} | {row}")
    print("-" * len(sub))
    print(
        f"{'micro':<16} {result['cases']:>5} {result['vulnerable']:>4} | "
        + " | ".join(_fmt(tools[n]["micro"]) for n in names)
    )
    print(f"{'OWASP average':<16} {'':>5} {'':>4} | " + " | ".join(_fmt(tools[n]["average"]) for n in names))


def print_dvpwa(result: dict[str, Any]) -> None:
    print()
    print(f"DVPWA: {result['checkout']}" + (f" at {result['commit']}" if result["commit"] else ""))
    for note in result["notes"]:
        print(f"  note: {note}")
    tools = result["tools"]
    names = list(tools)
    for name in names:
        print(f"  {name}: {tools[name]['rule']}")
    print(f"{'vulnerability':<26} {'CWE':>5} {'source':<7} | " + " | ".join(f"{n:<8}" for n in names))
    first = tools[names[0]]["vulnerabilities"]
    for vuln_id, cell in first.items():
        marks = " | ".join(
            f"{'found' if tools[n]['vulnerabilities'][vuln_id]['found'] else 'missed':<8}" for n in names
        )
        print(f"{vuln_id:<26} {cell['cwe']:>5} {cell['source']:<7} | {marks}")
    for name in names:
        tool = tools[name]
        print(
            f"  {name}: found {tool['found_readme']}/{tool['readme_total']} README vulnerabilities, "
            f"{tool['found_all']}/{tool['total']} in all; {len(tool['other_flagged'])} other "
            f"{'P0/P1' if name == 'fluxdrive' else 'MEDIUM/HIGH'}; {tool['seconds']:.1f} s"
        )
        for vuln_id, cell in tool["vulnerabilities"].items():
            for hit in cell["by"]:
                print(f"    {vuln_id}: {hit}")
        for other in tool["other_flagged"]:
            print(
                f"    other {other['severity']} {other['rule']} {', '.join(other['locations'][:3])}: {other['title'][:110]}"
            )


# ---------------------------------------------------------------- main


def _check_args(args: argparse.Namespace) -> None:
    checkout: Path = args.checkout
    if not checkout.is_dir():
        raise UsageError(f"{checkout}: not a directory (expected a BenchmarkPython checkout)")
    if not (checkout / EXPECTED).is_file() or not (checkout / "testcode").is_dir():
        raise UsageError(f"{checkout}: no {EXPECTED} and testcode/ here: not a BenchmarkPython checkout")
    if args.dvpwa is not None and not (args.dvpwa / "sqli").is_dir():
        raise UsageError(f"{args.dvpwa}: no sqli/ package here: not a dvpwa checkout")
    if args.json is not None and not args.json.resolve().parent.is_dir():
        raise UsageError(f"{args.json}: its directory does not exist")
    if args.bandit is not None and shutil.which(args.bandit) is None:
        raise UsageError(f"{args.bandit}: no such bandit executable")
    if args.semgrep_config is not None and not args.semgrep_config.exists():
        raise UsageError(f"{args.semgrep_config}: no such semgrep rule file or directory")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="fluxdrive vs bandit on OWASP BenchmarkPython (even cases) and DVPWA.")
    parser.add_argument("checkout", nargs="?", type=Path, help="a BenchmarkPython checkout")
    parser.add_argument("--dvpwa", type=Path, help="a checkout of anxolerd/dvpwa")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument(
        "--semgrep-config", type=Path, help="a local semgrep rule file or directory (semgrep runs only with one)"
    )
    parser.add_argument(
        "--bandit", help="the bandit executable to run (default: the one beside this Python; use one on Python 3.12+)"
    )
    args = parser.parse_args(argv)
    if args.checkout is None:
        print(
            "bench/security.py: skipped (pass a BenchmarkPython checkout: bench/security.py PATH [--dvpwa PATH] [--json OUT])"
        )
        return 0
    try:
        _check_args(args)
        with tempfile.TemporaryDirectory(prefix="fluxdrive-security-") as tmp:
            scratch = Path(tmp)
            report: dict[str, Any] = {
                "benchmarkpython": benchmark_python(args.checkout.resolve(), scratch, args.semgrep_config, args.bandit)
            }
            print_benchmark(report["benchmarkpython"])
            if args.dvpwa is not None:
                report["dvpwa"] = dvpwa(args.dvpwa.resolve(), scratch, args.bandit)
                print_dvpwa(report["dvpwa"])
    except UsageError as error:
        print(f"bench/security.py: {error}", file=sys.stderr)
        return 2
    except ToolError as error:
        print(f"bench/security.py: {error}", file=sys.stderr)
        return 1
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        print(f"\nfigures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
