"""fluxdrive and semgrep on an imported benchmark's diff fixtures, scored by the same rule (issue 32).

``fluxdrive eval run`` scores fluxdrive alone, by its matcher (place, kind and text). A user choosing a reviewer
also asks how a plain analyzer does on the same changes, so this bench runs both on every diff fixture that
``fluxdrive eval import`` or ``eval mine`` wrote, and scores them alike, as a pull-request reviewer is read:

- each fixture is staged as ``eval run`` stages it (``base/`` with ``change.patch`` applied);
- fluxdrive reviews the change as ``eval run`` does (``review -`` with the patch on stdin, static runtime, measured
  confidence off);
- semgrep (``sh bench/tools.sh``) scans every staged tree in one run, with semgrep-rules' directories for the
  languages present (read from the local mirror of semgrep/semgrep-rules, extracted by ``bench/realcode.py``);
- only *flagged* results count (fluxdrive P0/P1, semgrep ERROR/WARNING) and only on lines the change added or
  modified: what a review of the change would post;
- a ground-truth finding is *found* when such a result is in its file within +-3 lines of it (the rule of
  ``bench/realcode.py``; no kind is asked for, so the two tools are judged on place alone);
- on a clean change (empty ground truth) every such result is a false alarm.

Printed per language (``source.language`` of the ground truth) and in total: truths, found by each tool, flagged
results on positive changes, false alarms per clean change, seconds; and the ratio of fluxdrive's time to
semgrep's. Nothing is downloaded.

Run: ``.venv/bin/python bench/imported.py FIXTURES [--limit N] [--skip semgrep] [--json OUT]``.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/realcode.py, when run as a script
from realcode import (
    FLAGGING,
    MIRRORS,
    NEAR_WEAKNESS,
    RULE_DIRS,
    NotHereError,
    ToolError,
    run_semgrep,
    semgrep_command,
    semgrep_rules,
)
from security import Location, finding_locations

from fluxdrive.core.atomic import atomic_write_text
from fluxdrive.eval.fixture import Fixture, find_fixtures
from fluxdrive.eval.stage import stage

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")
_LANGUAGE_OF_SUFFIX = {".py": "python", ".js": "javascript", ".jsx": "javascript", ".mjs": "javascript",
                       ".cjs": "javascript", ".ts": "typescript", ".tsx": "typescript", ".go": "go"}  # fmt: skip
TOOLS = ("fluxdrive", "semgrep")


def changed_lines(patch: str) -> dict[str, set[int]]:
    """New-side line numbers each file of a unified diff adds or modifies."""
    lines: dict[str, set[int]] = {}
    path, number = "", 0
    for raw in patch.split("\n"):
        line = raw.rstrip("\r")
        if line.startswith("+++ "):
            name = line[4:].split("\t", 1)[0]
            path = name[2:] if name.startswith("b/") else ("" if name == "/dev/null" else name)
        elif hunk := _HUNK.match(line):
            number = int(hunk.group(1))
        elif line.startswith("+") and path:
            lines.setdefault(path, set()).add(number)
            number += 1
        elif line.startswith(" ") or line == "":
            number += 1
    return lines


@dataclass
class Case:
    """One staged fixture: its ground truth as (path, first, last), its changed lines, each tool's flagged results."""

    fixture: Fixture
    language: str
    truths: list[tuple[str, int, int]]
    changed: dict[str, set[int]]
    flagged: dict[str, list[Location]] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)

    def on_change(self, location: Location) -> bool:
        if location.start is None:
            return False
        end = location.end if location.end is not None else location.start
        return any(n in self.changed.get(location.path, ()) for n in range(location.start, end + 1))

    def found(self, tool: str) -> int:
        return sum(
            any(
                loc.path == path and loc.start is not None and loc.start - NEAR_WEAKNESS <= last
                and first <= (loc.end or loc.start) + NEAR_WEAKNESS
                for loc in self.flagged.get(tool, [])
            )
            for path, first, last in self.truths
        )  # fmt: skip


def _truths(fixture: Fixture) -> list[tuple[str, int, int]]:
    truths = []
    for finding in fixture.truth.findings:
        path, _, lines = finding.location.rpartition(":")
        first, _, last = lines.partition("-")
        if path and first.isdigit():
            truths.append((path, int(first), int(last) if last.isdigit() else int(first)))
    return truths


def _language(fixture: Fixture) -> str:
    source = (fixture.truth.model_extra or {}).get("source")
    language = source.get("language") if isinstance(source, dict) else None
    return str(language) if language else "unknown"


def run_fluxdrive(case: Case, work: Path, patch: str, scratch: Path) -> None:
    output = Path(tempfile.mkdtemp(prefix="out-", dir=scratch))
    args = [sys.executable, "-m", "fluxdrive", "review", "-", "--yes", "--runtime", "static", "--fail-on", "never",
            "-q", "--output-dir", str(output), "--set", "synthesis.measured=false"]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(args, input=patch, capture_output=True, text=True, cwd=work, check=False)
    case.seconds["fluxdrive"] = time.perf_counter() - started
    report = output / "findings.json"
    if done.returncode not in (0, 1) or not report.is_file():
        case.errors["fluxdrive"] = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return
    findings = json.loads(report.read_text(encoding="utf-8")).get("findings", [])
    case.flagged["fluxdrive"] = [
        loc
        for item in findings
        if item.get("severity") in FLAGGING["fluxdrive"]
        for loc in finding_locations(item, work)
        if case.on_change(loc)
    ]


def run_semgrep_once(cases: dict[str, Case], root: Path, command: str, cache: Path) -> float:
    """One semgrep scan of every staged tree under ``root`` (rules parsed once); results split per fixture."""
    directories = sorted({d for case in cases.values() for d in RULE_DIRS.get(case.language.lower(), ())})
    configs = semgrep_rules(MIRRORS, cache, directories)
    run = run_semgrep(command, configs, root)
    for item in run.items:
        if str((item.get("extra") or {}).get("severity", "")) not in FLAGGING["semgrep"]:
            continue
        named = Path(str(item.get("path", "")))
        relative = named.relative_to(root) if named.is_absolute() and named.is_relative_to(root) else named
        top, _, path = relative.as_posix().removeprefix("./").partition("/")
        case = cases.get(top)
        if case is None:
            continue
        start, end = (item.get("start") or {}).get("line"), (item.get("end") or {}).get("line")
        location = Location(path, start, end or start)
        if case.on_change(location):
            case.flagged.setdefault("semgrep", []).append(location)
    for case in cases.values():
        case.flagged.setdefault("semgrep", [])
    return run.seconds


def _table(cases: list[Case], tools: tuple[str, ...], semgrep_seconds: float | None) -> list[str]:
    groups: dict[str, list[Case]] = {}
    for case in cases:
        groups.setdefault(case.language, []).append(case)
    groups["all"] = cases
    header = f"{'language':<12} {'changes':>7} {'truths':>6}"
    for tool in tools:
        header += f" {tool + ' found':>15} {'flagged':>7} {'alarms/clean':>12}"
    lines = [header]
    for language, group in groups.items():
        positives = [c for c in group if c.truths]
        clean = [c for c in group if not c.truths]
        truths = sum(len(c.truths) for c in positives)
        row = f"{language:<12} {len(group):>7} {truths:>6}"
        for tool in tools:
            found = sum(c.found(tool) for c in positives)
            share = f"{found}/{truths} {found / truths:4.0%}" if truths else "-"
            flagged = sum(len(c.flagged.get(tool, [])) for c in positives)
            alarms = sum(len(c.flagged.get(tool, [])) for c in clean) / len(clean) if clean else 0.0
            row += f" {share:>15} {flagged:>7} {alarms:>12.2f}"
        lines.append(row)
    fluxdrive = sum(c.seconds.get("fluxdrive", 0.0) for c in cases)
    timing = f"seconds: fluxdrive {fluxdrive:.1f}"
    if semgrep_seconds:
        timing += f", semgrep {semgrep_seconds:.1f} (one scan of every change), ratio {fluxdrive / semgrep_seconds:.2f}"
    errors = Counter(tool for c in cases for tool in c.errors)
    lines += [timing, f"errors: {dict(errors) or 'none'}"]
    lines.append(
        f"(found: a ground-truth line with a flagged result - fluxdrive P0/P1, semgrep ERROR/WARNING - on a changed "
        f"line within +-{NEAR_WEAKNESS} lines; flagged: such results on the positive changes; alarms/clean: on the "
        "clean changes, per change)"
    )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("fixtures", type=Path, help="a directory of diff fixtures (fluxdrive eval import / mine)")
    parser.add_argument("--limit", type=int, default=None, help="the first N fixtures only")
    parser.add_argument("--skip", choices=["semgrep"], action="append", default=[])
    parser.add_argument("--semgrep", default=None, help="the semgrep command (default: .venv-bench, then PATH)")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "fluxdrive-bench")
    parser.add_argument("--json", type=Path, default=None, help="write every case's figures here")
    args = parser.parse_args(argv)
    fixtures = [f for f in find_fixtures(args.fixtures) if f.kind == "diff"][: args.limit]
    if not fixtures:
        print(f"bench/imported.py: no diff fixture under {args.fixtures}", file=sys.stderr)
        return 2
    semgrep = None if "semgrep" in args.skip else semgrep_command(args.semgrep)
    tools = ("fluxdrive", "semgrep") if semgrep else ("fluxdrive",)
    with tempfile.TemporaryDirectory(prefix="fluxdrive-imported-") as tmp:
        scratch, trees = Path(tmp), Path(tmp) / "trees"
        trees.mkdir()
        cases: dict[str, Case] = {}
        for number, fixture in enumerate(fixtures, 1):
            staging = Path(tempfile.mkdtemp(prefix="stage-", dir=scratch))
            _target, work, patch = stage(fixture, staging)
            case = Case(fixture, _language(fixture), _truths(fixture), changed_lines(patch or ""))
            run_fluxdrive(case, work, patch or "", scratch)
            work.rename(trees / fixture.id)
            cases[fixture.id] = case
            print(f"\r{number}/{len(fixtures)} {fixture.id[:60]:<60}", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
        semgrep_seconds = None
        if semgrep:
            try:
                semgrep_seconds = run_semgrep_once(cases, trees, semgrep, args.cache)
            except (ToolError, NotHereError) as error:
                print(f"semgrep skipped: {error}", file=sys.stderr)
                tools = ("fluxdrive",)
    ordered = list(cases.values())
    print(f"{args.fixtures}: {len(ordered)} diff fixture(s), {sum(len(c.truths) for c in ordered)} truths")
    print("\n".join(_table(ordered, tools, semgrep_seconds)))
    if args.json:
        document = {
            "fixtures": str(args.fixtures),
            "tools": list(tools),
            "semgrep_seconds": semgrep_seconds,
            "cases": [
                {"id": c.fixture.id, "language": c.language, "truths": len(c.truths),
                 "found": {t: c.found(t) for t in tools}, "flagged": {t: len(c.flagged.get(t, [])) for t in tools},
                 "seconds": c.seconds, "errors": c.errors}
                for c in ordered
            ],
        }  # fmt: skip
        atomic_write_text(args.json, json.dumps(document, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
