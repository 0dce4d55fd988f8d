"""Benchmark the review's judgment: does the default review find what ``--expand all`` finds?

For every case of the labelled corpus in ``bench/judgment/cases/`` (feature
branches with planted defects in Python, JS/TS and Go, diffs on stdin, big
diffs with one dangerous file, code documents in the interflux qualification
format, plans, PRDs and API specs, an empty diff and clean changes; see
``bench/judgment/README.md``), this script:

1. materializes the case in a temporary directory as a real git repository
   (the base committed on ``main``, the feature branch checked out with its
   overlay committed), with a fresh user (``XDG_*`` directories, git identity);
2. runs the command a user would type (``case.yaml`` ``command:``) through the
   real CLI as a subprocess - ``.venv/bin/fluxdrive`` unless ``--fluxdrive``
   says otherwise - adding ``--output-dir`` (in the temp directory) and
   ``--quiet``; then materializes it again and reruns it with ``--expand all``;
3. reads ``findings.json`` and ``run.json`` and matches the findings to the
   case's ground truth.

Matching rule. A ground-truth entry names a file and a line, a range, a list
of lines/ranges (any counts) or, for markdown, a section (its heading's line
to the line before the next heading of the same or a higher level). A finding
is compatible with an entry when one of its locations (any of ``locations``)
is in the same file (equal paths, or one ends with ``/`` + the other) within
3 lines of the entry's place (or its ``section`` names the entry's heading),
its severity is at most one level from the entry's (a P3 nit on the line of a
P0 does not "find" the P0), and - strict matching, the headline figures - it
is about the same kind of problem: its title or rule ids use a word of the
entry's category family (``FAMILIES`` in bench/_judgment_match.py; generic
categories such as interflux's "security" accept any finding). The "loose"
figures drop the kind test (place and severity only). Findings and entries
are matched one to one (maximum bipartite matching, P0/P1 entries first, each
entry trying its closest finding first). A P0/P1 finding compatible with no
entry is a false P0/P1; one compatible with an entry another finding already
matched is a duplicate (counted in the JSON, not a false positive). In clean
cases (no ground truth) every P0/P1 is false.

Per case it prints, for the default run and the ``--expand all`` run side by
side: agents launched, verdict, exit code, ground truth found (P0/P1 and all),
false P0/P1 and seconds; ``!`` marks a failed expectation (``expect:`` in
case.yaml, e.g. the empty diff's exit 0 and "nothing to review") or a CLI
anomaly (a traceback, an exit code other than 0/1, no findings.json), listed
below the table. Then the totals: recall of P0/P1 and of all ground truth,
false P0/P1, mean agents launched (over runs that wrote findings.json), time,
and the ratio "default finds X% of what --expand all finds" (ground truth
found by both / found by --expand all) against the goal of 95%.

``--staged`` adds two runs with ``--set selection.staging=always`` (the plan
a paid runtime gets when the roster exceeds the budget, played by the static
agents): with the default expansion and with ``--expand all``; the ratio
between them says whether staging and expansion hide findings.

``--all-agents`` adds a third run with ``--agents`` naming every review agent
(and ``--expand all``): what triage leaves out entirely, which ``--expand
all`` cannot bring back, shows up as the gap between the two references.

Run: ``.venv/bin/python bench/judgment.py`` (``--case '0[1-5]*'`` for a
subset, ``--json`` for machine-readable output, ``--details`` for every
ground-truth entry and false P0/P1, ``--jobs 2`` to run two cases at once,
``--fluxdrive 'python -m fluxdrive'`` for another CLI, ``--keep DIR`` to keep
the repositories and outputs). About 90 s for the 72 runs on 2 cores. Exit 1
when the default run finds less than 95% of the P0/P1 ground truth that
``--expand all`` finds.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _judgment_corpus import Case, Run, execute, git_env, load_cases, materialize, pipeline
from _judgment_match import Finding, Truth, load_findings, load_truths, score

ROOT = Path(__file__).resolve().parent.parent
GOAL = 0.95


@dataclass(frozen=True)
class Mode:
    """One way of running every case: its name in the JSON, its column label, the options it adds."""

    name: str
    label: str
    extra: tuple[str, ...] = ()


MODES = [Mode("default", "default"), Mode("expand_all", "--expand all", ("--expand", "all"))]


def default_cli() -> list[str]:
    venv = ROOT / ".venv" / "bin" / "fluxdrive"
    return [str(venv)] if venv.exists() else [sys.executable, "-m", "fluxdrive"]


def quiet_flag(cli: list[str]) -> list[str]:
    """``--quiet`` if this CLI's review command has it."""
    shown = subprocess.run([*cli, "review", "--help"], capture_output=True, text=True, check=False)
    return ["--quiet"] if "--quiet" in shown.stdout else []


def _agents(run: Run) -> list[str]:
    if run.findings is not None:
        return list(run.findings.get("agents_launched") or [])
    if run.manifest is not None:
        return sorted({a for stage in run.manifest.get("stages", []) for a in stage.get("agents", [])})
    return []


def _anomalies(case: Case, run: Run) -> list[str]:
    problems = list(run.notes)
    expect = case.expect
    if "Traceback (most recent call last)" in run.stderr:
        problems.append("traceback on stderr")
    if "exit_code" in expect and run.exit_code != expect["exit_code"]:
        problems.append(f"exit {run.exit_code}, expected {expect['exit_code']}")
    elif "exit_code" not in expect and run.exit_code not in (0, 1):
        problems.append(f"exit {run.exit_code}")
    wanted = expect.get("output_contains")
    if wanted and wanted.lower() not in (run.stdout + run.stderr).lower():
        problems.append(f"output lacks {wanted!r}")
    if run.findings is None and "output_contains" not in expect:
        problems.append("no findings.json")
    if problems:
        tail = (run.stderr.strip() or run.stdout.strip()).splitlines()[-3:]
        problems.append("output: " + " / ".join(line.strip() for line in tail))
    return problems


def _verdict(run: Run) -> str:
    if run.findings is not None:
        return str(run.findings.get("verdict"))
    if "nothing to review" in (run.stdout + run.stderr).lower():
        return "nothing"
    return "-"


def _finding_json(finding: Finding) -> dict[str, Any]:
    return {"id": finding.id, "severity": finding.severity, "where": finding.where(), "title": finding.title}


def one_run(
    case: Case, mode: str, extra: tuple[str, ...], cli: list[str], quiet: list[str], scratch: Path
) -> dict[str, Any]:
    base = scratch / case.name / mode
    shutil.rmtree(base, ignore_errors=True)  # --keep DIR may hold an earlier run
    env = git_env(base / "home")
    repo, out = base / "repo", base / "out"
    materialize(case, repo, env)
    run = execute(pipeline(case.command, cli, ["--output-dir", str(out), *quiet, *extra]), repo, env, out)
    truths = load_truths(case.ground_truth, repo)
    findings = load_findings(run.findings or {})
    result = score(truths, findings)
    loose = score(truths, findings, strict=False)
    titles = {f.id: f.title for f in findings}
    return {
        "command": " | ".join(shlex.join(stage) for stage in run.argv),
        "exit_code": run.exit_code,
        "seconds": round(run.seconds, 2),
        "verdict": _verdict(run),
        "counts": (run.findings or {}).get("counts"),
        "agents_launched": _agents(run),
        "stages": [s.get("agents", []) for s in (run.manifest or {}).get("stages", [])],
        "expansion": ((run.manifest or {}).get("expansion") or {}).get("kind"),
        "found": {str(t): f for t, f in sorted(result.matched.items())},
        "found_titles": {str(t): titles[f] for t, f in sorted(result.matched.items())},
        "gt_found_blocking": result.found(truths, blocking_only=True),
        "gt_found_all": result.found(truths),
        "false_blocking": [_finding_json(f) for f in result.false_blocking],
        "duplicates": result.duplicates,
        "loose": {
            "found": {str(t): f for t, f in sorted(loose.matched.items())},
            "gt_found_blocking": loose.found(truths, blocking_only=True),
            "gt_found_all": loose.found(truths),
            "false_blocking": len(loose.false_blocking),
        },
        "findings": len(findings),
        "anomalies": _anomalies(case, run),
        "stderr_tail": run.stderr.strip().splitlines()[-5:],
        "_score": result,
        "_truths": truths,
    }


def run_case(case: Case, modes: list[Mode], cli: list[str], quiet: list[str], scratch: Path) -> dict[str, Any]:
    runs = {mode.name: one_run(case, mode.name, mode.extra, cli, quiet, scratch) for mode in modes}
    truths: list[Truth] = runs["default"]["_truths"]
    return {
        "case": case.name,
        "kind": case.kind,
        "command": case.command,
        "gt_blocking": sum(t.blocking for t in truths),
        "gt_all": len(truths),
        "ground_truth": [
            {
                "index": t.index,
                "where": t.where(),
                "severity": t.severity,
                "category": t.category,
                "found": {name: run["found"].get(str(t.index)) for name, run in runs.items()},
                "found_loose": {name: run["loose"]["found"].get(str(t.index)) for name, run in runs.items()},
                "found_as": next(
                    (run["found_titles"][str(t.index)] for run in runs.values() if str(t.index) in run["found_titles"]),
                    None,
                ),
            }
            for t in truths
        ],
        "runs": runs,
    }


def _both(
    result: dict[str, Any], reference: str, *, blocking: bool, loose: bool, subject: str = "default"
) -> tuple[int, int]:
    """(found by the subject run and the reference run, found by the reference run) for this case."""
    both = found = 0
    for entry in result["ground_truth"]:
        if blocking and entry["severity"] not in ("P0", "P1"):
            continue
        hits = entry["found_loose" if loose else "found"]
        if hits[reference]:
            found += 1
            both += bool(hits[subject])
        # an entry found by the default run only does not count against the ratio
    return both, found


def _mode_totals(runs: list[dict[str, Any]], gt_blocking: int, gt_all: int) -> dict[str, Any]:
    launched = [len(run["agents_launched"]) for run in runs if run["counts"] is not None]

    def share(count: int, total: int) -> float | None:
        return count / total if total else None

    found_blocking = sum(run["gt_found_blocking"] for run in runs)
    found_all = sum(run["gt_found_all"] for run in runs)
    return {
        "recall_blocking": share(found_blocking, gt_blocking),
        "found_blocking": found_blocking,
        "recall_all": share(found_all, gt_all),
        "found_all": found_all,
        "false_blocking": sum(len(run["false_blocking"]) for run in runs),
        "mean_agents": sum(launched) / len(launched) if launched else None,
        "seconds": round(sum(run["seconds"] for run in runs), 1),
        "anomalies": sum(bool(run["anomalies"]) for run in runs),
        "loose_recall_blocking": share(sum(run["loose"]["gt_found_blocking"] for run in runs), gt_blocking),
        "loose_recall_all": share(sum(run["loose"]["gt_found_all"] for run in runs), gt_all),
        "loose_false_blocking": sum(run["loose"]["false_blocking"] for run in runs),
    }


def totals(results: list[dict[str, Any]], modes: list[Mode]) -> dict[str, Any]:
    gt_blocking = sum(r["gt_blocking"] for r in results)
    gt_all = sum(r["gt_all"] for r in results)
    summary: dict[str, Any] = {"cases": len(results), "ground_truth": {"P0/P1": gt_blocking, "all": gt_all}}
    for mode in modes:
        summary[mode.name] = _mode_totals([r["runs"][mode.name] for r in results], gt_blocking, gt_all)
    summary["ratios"] = {}
    for mode in modes[1:]:
        ratios = {}
        for key, blocking, loose in (
            ("blocking", True, False),
            ("all", False, False),
            ("loose_blocking", True, True),
            ("loose_all", False, True),
        ):
            pairs = [_both(r, mode.name, blocking=blocking, loose=loose) for r in results]
            both, found = sum(p[0] for p in pairs), sum(p[1] for p in pairs)
            ratios[key] = {"both": both, "reference": found, "ratio": both / found if found else None}
        summary["ratios"][mode.name] = ratios
    if "staged" in summary and "staged_all" in summary:  # a paid run's plan: does its expansion find enough?
        pairs = [_both(r, "staged_all", blocking=True, loose=False, subject="staged") for r in results]
        both, found = sum(p[0] for p in pairs), sum(p[1] for p in pairs)
        summary["staged_ratio"] = {"both": both, "reference": found, "ratio": both / found if found else None}
    summary["goal"] = GOAL
    return summary


def _cell(run: dict[str, Any], result: dict[str, Any]) -> str:
    mark = "!" if run["anomalies"] else " "
    blocking = f"{run['gt_found_blocking']}/{result['gt_blocking']}"
    every = f"{run['gt_found_all']}/{result['gt_all']}"
    agents = len(run["agents_launched"])
    return (
        f"{agents:>2} {run['verdict']:<13.13} {run['exit_code']:>3}{mark} {blocking:>5} {every:>5} "
        f"{len(run['false_blocking']):>4} {run['seconds']:>5.1f}"
    )


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.0f}%"


def print_table(results: list[dict[str, Any]], modes: list[Mode]) -> None:
    head = "ag verdict       exit  P0/1   all fP01     s"
    print(f"{'case':<38} {'kind':<15}" + "".join(f"| {mode.label:<44}" for mode in modes).rstrip())
    print(f"{'':<38} {'':<15}" + "".join(f"| {head:<44}" for _ in modes).rstrip())
    for result in results:
        cells = "".join(f"| {_cell(result['runs'][mode.name], result):<44}" for mode in modes)
        print(f"{result['case']:<38.38} {result['kind']:<15.15}{cells}".rstrip())
    print("(ag: agents launched; P0/1 and all: ground truth found / in the case; fP01: false P0/P1; s: seconds)")
    print("(strict matching: place, severity +-1 and kind of problem; 'loose' rows below: place and severity only)")
    notes = [
        (r["case"], mode.name, problem)
        for r in results
        for mode in modes
        for problem in r["runs"][mode.name]["anomalies"]
    ]
    if notes:
        print("\n! expectations failed / CLI anomalies:")
        for name, mode_name, problem in notes:
            print(f"  {name} [{mode_name}]: {problem}")


def print_totals(summary: dict[str, Any], modes: list[Mode]) -> None:
    gt = summary["ground_truth"]
    print(f"totals over {summary['cases']} cases ({gt['P0/P1']} P0/P1 and {gt['all']} ground-truth entries in all):")
    print(f"{'':<22}" + "".join(f"{mode.label:>16}" for mode in modes))
    rows = (
        ("recall P0/P1", lambda m: f"{_pct(m['recall_blocking'])} ({m['found_blocking']})"),
        ("recall all", lambda m: f"{_pct(m['recall_all'])} ({m['found_all']})"),
        ("false P0/P1", lambda m: str(m["false_blocking"])),
        ("mean agents launched", lambda m: "n/a" if m["mean_agents"] is None else f"{m['mean_agents']:.2f}"),
        ("seconds (all cases)", lambda m: f"{m['seconds']:.1f}"),
        ("runs with anomalies", lambda m: str(m["anomalies"])),
        ("loose recall P0/P1", lambda m: _pct(m["loose_recall_blocking"])),
        ("loose recall all", lambda m: _pct(m["loose_recall_all"])),
        ("loose false P0/P1", lambda m: str(m["loose_false_blocking"])),
    )
    for label, cell in rows:
        print(f"{label:<22}" + "".join(f"{cell(summary[mode.name]):>16}" for mode in modes))
    if "staged_ratio" in summary:
        staged = summary["staged_ratio"]
        print(
            f"staged (a paid run's plan) finds {_pct(staged['ratio'])} of what staged with --expand all finds "
            f"(P0/P1 ground truth: {staged['both']} of {staged['reference']}); goal >= {100 * GOAL:.0f}%"
        )
    for mode in modes[1:]:
        if mode.name.startswith("staged"):
            continue
        ratios = summary["ratios"][mode.name]
        for key, label in (
            ("blocking", "P0/P1 ground truth"),
            ("all", "all ground truth"),
            ("loose_blocking", "P0/P1, loose matching"),
            ("loose_all", "all, loose matching"),
        ):
            ratio = ratios[key]
            headline = key == "blocking" and mode.name == "expand_all"
            print(
                f"default finds {_pct(ratio['ratio'])} of what {mode.label} finds ({label}: "
                f"{ratio['both']} of {ratio['reference']}); goal >= {100 * GOAL:.0f}%"
                + (f" -> ratio to goal {(ratio['ratio'] or 0) / GOAL:.2f}" if headline else "")
            )


def print_details(results: list[dict[str, Any]], modes: list[Mode]) -> None:
    order = " / ".join(mode.label for mode in modes)
    print(f"\nground truth (finding id in the runs: {order}; - = missed):")
    for result in results:
        print(f"  {result['case']}")
        for entry in result["ground_truth"]:
            ids = " / ".join(f"{entry['found'][mode.name] or '-':>5}" for mode in modes)
            print(f"    {entry['severity']} {entry['category']:<24.24} {entry['where']:<48.48} {ids}")
        for mode in modes:
            for finding in result["runs"][mode.name]["false_blocking"]:
                print(f"    false {finding['severity']} [{mode.name}] {finding['where']}: {finding['title'][:90]}")


def review_agents(cli: list[str]) -> list[str]:
    """Every review agent the CLI knows (``fluxdrive agents list``)."""
    shown = subprocess.run([*cli, "agents", "list"], capture_output=True, text=True, check=True)
    return [line.split()[0] for line in shown.stdout.splitlines()[1:] if line.split()[1:2] == ["review"]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Default review vs --expand all on the labelled judgment corpus.")
    parser.add_argument("--case", default="*", help="glob over case directory names, e.g. '0[1-5]*'")
    parser.add_argument("--json", action="store_true", help="print one JSON document instead of the report")
    parser.add_argument("--details", action="store_true", help="list every ground-truth entry and false P0/P1")
    parser.add_argument("--all-agents", action="store_true", help="a third run with --agents <every review agent>")
    parser.add_argument(
        "--staged",
        action="store_true",
        help="two more runs with selection.staging=always (default expansion, then --expand all): a paid run's plan",
    )
    parser.add_argument("--jobs", type=int, default=1, help="cases run at once (default 1: honest seconds)")
    parser.add_argument("--fluxdrive", help="the CLI to run, e.g. 'python -m fluxdrive' (default .venv/bin/fluxdrive)")
    parser.add_argument("--keep", type=Path, help="keep the repositories and outputs in this directory")
    args = parser.parse_args(argv)
    cases = load_cases(args.case)
    if not cases:
        parser.error(f"no case matches {args.case!r}")
    cli = shlex.split(args.fluxdrive) if args.fluxdrive else default_cli()
    quiet = quiet_flag(cli)
    modes = list(MODES)
    if args.staged:  # what staging and expansion would run on a paid runtime, played by the static agents
        staging = ("--set", "selection.staging=always")
        modes += [
            Mode("staged", "staged", staging),
            Mode("staged_all", "staged, expand all", (*staging, "--expand", "all")),
        ]
    if args.all_agents:
        modes.append(Mode("all_agents", "all agents", ("--agents", ",".join(review_agents(cli)), "--expand", "all")))
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="fluxdrive-judgment-") as tmp:
        scratch = args.keep or Path(tmp)
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            results = list(pool.map(lambda case: run_case(case, modes, cli, quiet, scratch), cases))
    summary = totals(results, modes)
    summary["wall_seconds"] = round(time.monotonic() - started, 1)
    summary["cli"] = cli
    for result in results:
        for run in result["runs"].values():
            run.pop("_score"), run.pop("_truths")
    if args.json:
        print(json.dumps({"summary": summary, "cases": results}, indent=2))
    else:
        print_table(results, modes)
        if args.details:
            print_details(results, modes)
        print()
        print_totals(summary, modes)
        print(f"wall: {summary['wall_seconds']:.1f} s for {len(modes) * len(results)} runs ({shlex.join(cli)})")
    ratio = summary["ratios"]["expand_all"]["blocking"]["ratio"]
    return 0 if ratio is not None and ratio >= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
