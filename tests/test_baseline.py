"""Baselines (issue 16): record a review's findings by fingerprint, suppress them in later reviews.

Real reviews (the offline static runtime) of a small git project with two
real findings: a shell command built from input, and ``shell=True``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from fluxdrive.errors import FluxdriveError
from fluxdrive.runs import baseline
from fluxdrive.runs.baseline import (
    BaselineError,
    apply_baseline,
    fingerprints,
    load_baseline,
    read_run,
    remember_reviewed,
    since_last,
    write_baseline,
)
from fluxdrive.synthesis import Finding, synthesize
from tests.conftest import CliResult, git

Cli = Callable[..., CliResult]

TOOLS = (
    "import os\n"
    "import subprocess\n"
    "\n"
    "\n"
    "def clean(name):\n"
    '    os.system("rm -rf /tmp/" + name)\n'
    "\n"
    "\n"
    "def run(cmd):\n"
    "    subprocess.call(cmd, shell=True)\n"
)
SHIFT = '"""Tools, now with a docstring."""\n# one\n# two\n# three\n# four\n'
NEW_PROBLEM = "\n\ndef load(blob):\n    import pickle\n\n    return pickle.loads(blob)\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "tools.py").write_text(TOOLS)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    monkeypatch.chdir(root)
    return root


def _review(cli: Cli, project: Path, name: str | None = None) -> Path:
    """A real offline review of pkg/ into project/NAME (default: under docs/research/flux-drive/)."""
    args: list[str | Path] = ["review", "pkg", "--yes", "--format", "json"]
    if name is not None:
        args += ["--output-dir", project / name]
    done = cli(*args)
    assert done.code == 1, done.err  # risky: the shell command
    return project / name if name is not None else project


def _titles(findings: list[Finding]) -> list[str]:
    return sorted(f.title.split(":")[0] for f in findings)


def test_fingerprints_are_identical_across_runs_and_unique(cli: Cli, project: Path) -> None:
    first, second = _review(cli, project, "run1"), _review(cli, project, "run2")
    one, two = read_run(first).findings, read_run(second).findings
    assert len(one) == 2
    assert fingerprints(one, project) == fingerprints(two, project)
    assert len(set(fingerprints(one, project))) == 2
    assert all(len(f) == 32 for f in fingerprints(one, project))


def test_write_records_findings_by_fingerprint_not_line(cli: Cli, project: Path) -> None:
    run = _review(cli, project, "run1")
    done = cli("baseline", "write", run)
    assert done.code == 0, done.err
    assert "baseline .fluxdrive/baseline.json: 2 finding(s) from run1" in done.out
    document = json.loads((project / ".fluxdrive" / "baseline.json").read_text())
    assert document["kind"] == "fluxdrive-baseline" and document["schema_version"] == 1
    assert document["created_at"] and document["tool_version"]
    entries = document["findings"]
    assert {e["severity"] for e in entries} == {"P0", "P1"}
    assert {e["path"] for e in entries} == {"pkg/tools.py"}
    assert {e["rule"] for e in entries} == {"fluxdrive:py-command-injection"}
    assert all(e["first_seen"] and e["title"] and len(e["fingerprint"]) == 32 for e in entries)
    # no line numbers (a bare ":10" also matched a first_seen timestamp's minutes: a flake)
    assert not re.search(r"tools\.py:\d", json.dumps(entries)) and all("line" not in e for e in entries)
    assert sorted(e["fingerprint"] for e in entries) == sorted(fingerprints(read_run(run).findings, project))
    again = cli("baseline", "write", run)
    assert again.code == 0 and "(0 new, 2 kept, 0 dropped)" in again.out
    assert [e["first_seen"] for e in json.loads((project / ".fluxdrive/baseline.json").read_text())["findings"]] == [
        e["first_seen"] for e in entries
    ]


def test_default_output_dir_is_the_latest_run(cli: Cli, project: Path) -> None:
    _review(cli, project)  # under docs/research/flux-drive/
    done = cli("baseline", "write", "-o", "base.json")
    assert done.code == 0, done.err
    assert "from docs/research/flux-drive/" in done.out
    assert len(load_baseline(project / "base.json").entries) == 2


def test_only_the_new_finding_remains_after_lines_shift(cli: Cli, project: Path) -> None:
    first = _review(cli, project, "run1")
    assert cli("baseline", "write", first).code == 0
    source = project / "pkg" / "tools.py"
    source.write_text(SHIFT + TOOLS + NEW_PROBLEM)  # the old code moves down five lines; a new problem below
    second = _review(cli, project, "run2")
    result = synthesize(second)
    assert len(result.findings) == 3 and result.verdict == "risky"
    old_lines = {f.location for f in read_run(first).findings if f.location}
    assert not old_lines & {f.location for f in result.findings if f.location}  # every old finding moved

    outcome = apply_baseline(result, load_baseline(project / ".fluxdrive" / "baseline.json"), project)
    assert outcome.suppressed_count == 2 and outcome.fixed_count == 0
    assert [f.title.split(" in ")[0] for f in outcome.synthesis.findings] == ["pickle.loads() deserializes `blob`"]
    assert outcome.synthesis.verdict == "needs-changes"  # the P0 was the baseline's: re-derived from the P1 left
    said = "2 finding(s) already in the baseline .fluxdrive/baseline.json not shown; the 1 new one(s) numbered among"
    assert any(line.startswith(said) for line in outcome.synthesis.info)  # information the user asked for
    assert [f.id for f in outcome.synthesis.findings] == ["P1-1"]  # numbered among the new ones
    assert len(result.findings) == 3 and result.verdict == "risky"  # the input synthesis is unchanged
    assert outcome.synthesis is not result


def test_a_fixed_finding_is_counted_and_the_verdict_rederived(cli: Cli, project: Path) -> None:
    first = _review(cli, project, "run1")
    assert cli("baseline", "write", first).code == 0
    source = project / "pkg" / "tools.py"
    source.write_text(SHIFT + TOOLS.replace("    subprocess.call(cmd, shell=True)\n", "    subprocess.call(cmd)\n"))
    second = _review(cli, project, "run2")
    result = synthesize(second)
    outcome = apply_baseline(result, load_baseline(project / ".fluxdrive" / "baseline.json"), project)
    assert outcome.suppressed_count == 1 and outcome.fixed_count == 1
    assert outcome.fixed[0].severity == "P1" and "shell=True" in outcome.fixed[0].title
    assert outcome.synthesis.findings == [] and outcome.synthesis.verdict == "safe"
    assert any("1 finding(s) of the baseline" in line and "not found again" in line for line in outcome.synthesis.info)


def test_a_second_identical_hit_in_one_file_is_new(cli: Cli, project: Path) -> None:
    first = _review(cli, project, "run1")
    assert cli("baseline", "write", first).code == 0
    copy = '\n\ndef wipe(name):\n    os.system("rm -rf /tmp/" + name)\n'  # the same line as clean()'s
    (project / "pkg" / "tools.py").write_text(TOOLS + copy)
    second = _review(cli, project, "run2")
    outcome = apply_baseline(synthesize(second), load_baseline(project / ".fluxdrive" / "baseline.json"), project)
    assert outcome.suppressed_count == 2
    assert len(outcome.synthesis.findings) == 1 and outcome.synthesis.verdict == "risky"


def test_write_never_overwrites_a_file_that_is_not_a_baseline(cli: Cli, project: Path) -> None:
    run = _review(cli, project, "run1")
    foreign = project / "settings.json"
    foreign.write_text('{"theme": "dark"}\n')
    done = cli("baseline", "write", run, "-o", foreign)
    assert done.code == 2
    assert done.err.count("\n") == 1 and "is not a fluxdrive baseline; refusing to overwrite it" in done.err
    assert foreign.read_text() == '{"theme": "dark"}\n'
    corrupt = project / ".fluxdrive" / "baseline.json"
    corrupt.parent.mkdir(exist_ok=True)
    corrupt.write_text('{"kind": "fluxdrive-baseline", "findings": [')
    done = cli("baseline", "write", run)
    assert done.code == 2 and done.err.count("\n") == 1 and "refusing to overwrite" in done.err
    assert corrupt.read_text() == '{"kind": "fluxdrive-baseline", "findings": ['


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "does not exist"),
        ('{"kind": "fluxdrive-baseline", "findings": [', "is not valid JSON"),
        ('{"theme": "dark"}', "is not a fluxdrive baseline"),
        ('{"kind": "fluxdrive-baseline", "schema_version": 99, "findings": []}', "schema_version 99"),
        ('{"kind": "fluxdrive-baseline", "schema_version": 1, "findings": [{}]}', "finding 1 is malformed"),
    ],
)
def test_load_baseline_fails_with_one_readable_line(tmp_path: Path, content: str | None, message: str) -> None:
    path = tmp_path / "baseline.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(BaselineError, match=message) as caught:
        load_baseline(path)
    assert isinstance(caught.value, FluxdriveError) and caught.value.exit_code == 2
    assert "\n" not in caught.value.one_line()


def test_fingerprint_ignores_line_numbers_and_title_numbers(tmp_path: Path) -> None:
    source = tmp_path / "a.py"
    source.write_text("x = 1\nvalue = compute( 1 )\n")
    base = Finding("P2-1", "P2", ["fd-quality"], "Quality", "Magic number 1 (and 3 more places)", ["a.py:2"])
    before = fingerprints([base], tmp_path)
    source.write_text("\n\n\nx = 1\nvalue   = compute( 1 )\n")
    moved = Finding("P2-4", "P2", ["fd-quality"], "Quality", "Magic number 1 (and 4 more places)", ["./a.py:5"])
    assert fingerprints([moved], tmp_path) == before  # three lines down, spacing and the place count changed
    source.write_text("\n\n\nx = 1\nvalue = compute( 2 )\n")
    assert fingerprints([moved], tmp_path) != before  # the flagged line itself changed: a new finding
    elsewhere = Finding("P2-1", "P2", ["fd-quality"], "Quality", "Magic number 1", ["b.py:2"])
    assert fingerprints([elsewhere], tmp_path) != before
    unlocated = Finding("P3-1", "P3", ["fd-quality"], "Docs", "No README", [])
    assert len(fingerprints([unlocated], tmp_path)[0]) == 32


def test_write_baseline_library_round_trip(tmp_path: Path) -> None:
    findings = [
        Finding("P1-1", "P1", ["fd-safety"], "Safety", "token ghp_" + "a" * 36 + " committed", ["x.py:1"]),
    ]
    written = write_baseline(tmp_path / "b.json", findings, tmp_path, seen_at="2026-01-01T00:00:00.000Z")
    loaded = load_baseline(tmp_path / "b.json")
    assert loaded.fingerprints == written.fingerprints and loaded.entries[0].first_seen.startswith("2026-01-01")
    assert "ghp_" + "a" * 36 not in (tmp_path / "b.json").read_text()  # titles are masked


def test_since_last_and_remember_reviewed(project: Path) -> None:
    assert since_last(project, "main") is None
    commit = git(project, "rev-parse", "HEAD")
    path = remember_reviewed(project, "main", commit)
    assert path == project / ".git" / "fluxdrive" / "last-review.json"  # clone state, never committed
    assert since_last(project, "main") == commit
    assert since_last(project, "feature") is None
    remember_reviewed(project, "feature", "0" * 40)  # a commit git does not know
    assert since_last(project, "feature") is None and since_last(project, "main") == commit
    assert baseline.current_branch(project) == "main"
    path.write_text("not json")
    assert since_last(project, "main") is None
    with pytest.raises(BaselineError, match="not fluxdrive's last-review record"):
        remember_reviewed(project, "main", commit)
    assert path.read_text() == "not json"
