"""Hostile files must not exhaust the reviewing machine, and clustered findings must not stall synthesis.

Reproduces issue 26, items 12 and 13:

- a 21-34 KB file of 100-150 nested ``def``\\ s drove an offline review to
  14.7 GB RSS (lizard's memory doubles per nested function); a 5 MB
  single-line minified JavaScript file kept the review busy for minutes; a
  10,000-deep parenthesised expression;
- 5,000 findings on 30 lines took 20 s to synthesize (every finding linked to
  every other at its line), 10,000 took 175 s.

Each hostile file is generated in tmp_path, committed, and reviewed by the
real ``fluxdrive`` console script under an address-space ceiling of 2 GiB
(``RLIMIT_AS`` set in the child), so a missing bound shows as a MemoryError
or a peak RSS near the ceiling rather than as the machine's OOM killer. The
review must end with a verdict (exit 0 or 1), list the file it could not
fully review, and its peak RSS (``wait4``) must stay under 1.5 GB.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from fluxdrive.contracts import IndexEntry, render_index, write_agent_output
from fluxdrive.runtimes.static.bounds import LIZARD_MAX_NESTING, over_bound, shape, skip_of
from fluxdrive.synthesis import dedup, synthesize
from tests.conftest import committed_copy

CEILING = 2 * 1024**3
PEAK_LIMIT_KB = 1_500_000
HANG_S = 240
INJECTION = "import subprocess\n\n\ndef run(cmd):\n    return subprocess.check_output(cmd, shell=True)\n"


def nested_defs(depth: int) -> str:
    """``depth`` functions each defined inside the previous one (4-space indentation)."""
    parts = [f"{'    ' * i}def f{i}(a, b):\n{'    ' * i}    x = a + b\n" for i in range(depth)]
    return "".join(parts) + "    " * depth + "return x\n"


def hostile_project(tmp_path: Path, name: str, text: str) -> Path:
    """A committed repository holding ``name`` and one ordinary module with a shell injection."""
    staging = tmp_path / "staging"
    staging.mkdir()
    (staging / name).write_text(text)
    (staging / "app.py").write_text(INJECTION)
    return committed_copy(staging, tmp_path / "proj")


def _cap() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CEILING, CEILING))


def capped_review(project: Path, target: str, out: Path, *extra: str) -> tuple[int, str, int]:
    """(exit code, stdout, peak RSS in KB) of ``fluxdrive review TARGET --yes`` under the 2 GiB ceiling."""
    exe = Path(sys.executable).parent / "fluxdrive"
    stdout, stderr = out.parent / f"{out.name}.out", out.parent / f"{out.name}.err"
    with stdout.open("w") as so, stderr.open("w") as se:
        proc = subprocess.Popen(
            [str(exe), "review", target, "--yes", "-q", "--output-dir", str(out), *extra],
            cwd=project,
            stdout=so,
            stderr=se,
            stdin=subprocess.DEVNULL,
            preexec_fn=_cap,  # only setrlimit before exec: safe in a threaded parent
        )
        watchdog = threading.Timer(HANG_S, proc.kill)  # an unbounded analyzer ran for minutes: fail, not hang
        watchdog.start()
        try:
            _pid, status, usage = os.wait4(proc.pid, 0)  # the child's own peak RSS, and its waited children's
        finally:
            watchdog.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
    assert proc.returncode != -signal.SIGKILL, f"the review did not end within {HANG_S} s: an analyzer is unbounded"
    assert "Traceback" not in stderr.read_text(), stderr.read_text()
    return proc.returncode, stdout.read_text(), usage.ru_maxrss


def not_reviewed(out: Path) -> dict[str, str]:
    return {
        entry["path"]: entry["reason"] for entry in json.loads((out / "findings.json").read_text())["skipped_files"]
    }


@pytest.mark.parametrize(
    ("name", "text", "target", "bound"),
    [
        pytest.param("nested.py", nested_defs(150), "nested.py", "nested 150 levels deep", id="150-nested-defs"),
        pytest.param("nested.py", nested_defs(100), ".", "nested 100 levels deep", id="100-nested-defs-in-a-tree"),
        pytest.param(
            "parens.py", "x = " + "(\n" * 10_000 + "1" + "\n)" * 10_000 + "\n", ".", "10,000 levels deep", id="parens"
        ),
        pytest.param(
            "bundle.js",
            "function a(b){var c=b+1;if(c>2){return c*3}else{return eval(b)}};" * 75_000 + "\n",
            "bundle.js",
            "a line of 4,875,000 characters",
            id="5mb-single-line-js",
        ),
    ],
)
def test_a_hostile_file_is_skipped_by_the_bounded_analyzer_and_the_review_ends(
    tmp_path: Path, name: str, text: str, target: str, bound: str
) -> None:
    project = hostile_project(tmp_path, name, text)
    out = tmp_path / "out"
    code, stdout, peak_kb = capped_review(project, target, out)
    assert code in (0, 1), f"exit {code}, no verdict:\n{stdout[:600]}"
    assert stdout.splitlines()[0].startswith("Verdict:"), stdout[:300]
    skipped = not_reviewed(out)
    assert name in skipped, f"{name} is not listed as not reviewed: {skipped}"
    reasons = " | ".join(
        line for line in (out / "summary.md").read_text().splitlines() if name in line and "skipped it" in line
    )
    assert bound in reasons, f"the bound is not named in summary.md: {reasons!r}"
    assert "MemoryError" not in (out / "summary.md").read_text(), "an analyzer ran into the ceiling: no bound held"
    assert peak_kb < PEAK_LIMIT_KB, f"peak RSS {peak_kb / 1024:.0f} MB: an analyzer was not bounded"


def test_a_file_our_checks_spend_too_long_on_is_skipped_at_the_time_bound(tmp_path: Path) -> None:
    """100,000 lines of one statement: fluxdrive's checks stop at ``static.max_file_seconds`` (here 0.5 s).

    Over 20,000 lines the per-file pass runs in spawn workers (under the memory ceiling of
    bounds.limit_memory), so this also reviews through the worker path.
    """
    project = hostile_project(tmp_path, "repeated.py", "x = 1\n" * 100_000)
    out = tmp_path / "out"
    code, stdout, peak_kb = capped_review(project, ".", out, "--set", "static.max_file_seconds=0.5")
    assert code in (0, 1), stdout[:600]
    assert "checks skipped it: over the 0.5 s bound, static.max_file_seconds" in not_reviewed(out).get(
        "repeated.py", ""
    )
    assert peak_kb < PEAK_LIMIT_KB
    findings = json.loads((out / "findings.json").read_text())["findings"]
    assert any("shell" in f["title"] and "app.py" in json.dumps(f) for f in findings), "the other file was reviewed"


def test_a_normal_file_is_not_skipped_by_the_bounds(tmp_path: Path) -> None:
    """The bounds cost ordinary code nothing: a reviewed module is reviewed, its injection found."""
    project = hostile_project(tmp_path, "nested.py", nested_defs(5))
    out = tmp_path / "out"
    code, _stdout, _peak = capped_review(project, ".", out)
    assert code in (0, 1)
    assert not_reviewed(out) == {}
    findings = json.loads((out / "findings.json").read_text())["findings"]
    assert any("shell" in f["title"] and "app.py" in json.dumps(f) for f in findings), findings


def test_no_file_of_the_fixture_projects_breaks_a_bound() -> None:
    """Ordinary code, JavaScript and Go included, stays well inside the bounds (they skip only the hostile)."""
    projects = Path(__file__).resolve().parent.parent / "fixtures" / "projects"
    files = [p for p in sorted(projects.rglob("*")) if p.is_file() and p.suffix in {".py", ".js", ".go", ".ts"}]
    assert files
    for path in files:
        text = path.read_text(errors="replace")
        assert over_bound(text, max_nesting=LIZARD_MAX_NESTING) is None, path
        assert shape(text).nesting <= LIZARD_MAX_NESTING // 2, (path, shape(text))


def test_a_skip_note_names_its_file_and_reason() -> None:
    assert skip_of("lizard skipped src/a: b.js: nested 30 levels deep, over the 20-level bound") == (
        "src/a: b.js",
        "lizard skipped it: nested 30 levels deep, over the 20-level bound",
    )
    assert skip_of("pattern rules skipped x.js: MemoryError") == ("x.js", "pattern rules skipped it: MemoryError")
    assert skip_of("import graph: 3 modules") is None


def _title(i: int) -> str:
    digest = hashlib.sha256(str(i).encode()).hexdigest()
    return f"Unsafe {digest[:10]} flows into {digest[10:20]} via {digest[20:30]}"


def test_5000_findings_on_30_lines_synthesize_near_linearly_and_dedup_correctly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """2,500 distinct issues on 30 lines of one file, each reported by two agents: 5,000 findings.

    Rule 1 must merge each pair (2,500 findings crediting both agents); rule 2
    must link each to other issues of its line, at most MAX_CO_LOCATED; and
    the work must grow linearly: the similarity tests and path comparisons
    are counted, not timed.
    """
    issues, lines = 2_500, 30
    reports: dict[str, list[IndexEntry]] = {"fd-safety": [], "fd-correctness": []}
    for i in range(issues):
        for agent, prefix in (("fd-safety", "SF"), ("fd-correctness", "CR")):
            entry = IndexEntry("P1", f"{prefix}-{i + 1:04d}", "app", _title(i), f"app/views.py:{i % lines + 1}")
            reports[agent].append(entry)
    for agent, entries in reports.items():
        write_agent_output(tmp_path, agent, render_index(entries))

    calls = {"same": 0, "paths": 0}
    same, compatible = dedup.Similarity.same, dedup.compatible_paths

    def counted_same(self: dedup.Similarity, a: Any, b: Any) -> bool:
        calls["same"] += 1
        return same(self, a, b)

    def counted_paths(a: str, b: str) -> bool:
        calls["paths"] += 1
        return compatible(a, b)

    monkeypatch.setattr(dedup.Similarity, "same", counted_same)
    monkeypatch.setattr(dedup, "compatible_paths", counted_paths)
    result = synthesize(tmp_path)

    assert len(result.findings) == issues, "each issue is one finding, reported by both agents"
    assert all(f.agents == ["fd-correctness", "fd-safety"] for f in result.findings)
    assert all(f.co_located and 0 < len(f.co_located_with) <= dedup.MAX_CO_LOCATED for f in result.findings)
    by_id = {f.id: f for f in result.findings}
    for finding in result.findings[:50]:
        line = finding.locations[0]
        assert all(by_id[other].locations[0] == line for other in finding.co_located_with)
    total = 2 * issues
    assert calls["same"] <= 40 * total, f"{calls['same']:,} similarity tests for {total:,} findings: quadratic"
    assert calls["paths"] <= 2 * total, f"{calls['paths']:,} path comparisons for {total:,} findings: quadratic"
