"""``fluxdrive review --runtime cli-agent`` end to end, with a stand-in ``claude`` on PATH.

The stand-in is a real executable answering like ``claude -p --output-format
json``: it reads the prompt on stdin, reads the project file the prompt is
about from its working directory (the project root) and reports what it found
there. Everything around it is real: triage, dispatch, the process group,
the completion contract, synthesis, run.json and the history database.
"""

from __future__ import annotations

import json
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import committed_copy, run_fluxdrive

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "projects" / "py-webapp"

# fd-safety looks at shop/db.py itself (cwd is the project root) and reports the injection it sees there.
STAND_IN = """
import json, os, re, sys
from pathlib import Path
prompt = sys.stdin.read()
agent = re.search(r"fd-[a-z-]+", prompt).group(0)
Path(os.environ["STAND_IN_LOG"], agent).write_text(json.dumps({"cwd": os.getcwd(), "argv": sys.argv[1:]}))
report = "### Findings Index\\nVerdict: safe\\n\\n### Summary\\nNothing in my lane.\\n"
if agent == "fd-safety":
    line = next(i for i, text in enumerate(Path("shop/db.py").read_text().splitlines(), 1) if "%" in text)
    report = (
        "### Findings Index\\n"
        f'- P0 | SF-001 | "shop/db.py" | SQL built with % formatting reaches execute() | shop/db.py:{line}\\n'
        "Verdict: risky\\n"
    )
print(json.dumps({"type": "result", "result": report, "model": "claude-sonnet-4-6",
                  "usage": {"input_tokens": 1000, "output_tokens": 50}, "total_cost_usd": 0.004}))
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return committed_copy(FIXTURE, tmp_path / "shop")


@pytest.fixture
def bin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH holding only what the review needs: git, and (when a test adds it) the stand-in CLI."""
    directory = tmp_path / "bin"
    directory.mkdir()
    git_path = shutil.which("git")
    assert git_path is not None
    (directory / "git").symlink_to(git_path)
    monkeypatch.setenv("PATH", f"{directory}")
    log = tmp_path / "calls"
    log.mkdir()
    monkeypatch.setenv("STAND_IN_LOG", str(log))
    return directory


def _install_claude(directory: Path) -> None:
    stand_in = directory / "claude"
    stand_in.write_text(f"#!{sys.executable}\n" + textwrap.dedent(STAND_IN))
    stand_in.chmod(0o755)


def test_review_on_the_claude_cli(project: Path, bin_dir: Path, tmp_path: Path) -> None:
    _install_claude(bin_dir)

    done = run_fluxdrive(
        "review", ".", "--yes", "--set", "evidence.enabled=false", "--expand", "none", "--runtime", "cli-agent", "--model", "opus", "--fail-on", "never",
        cwd=project,
    )  # fmt: skip

    assert done.code == 0, done.err
    assert done.out.startswith("Verdict: RISKY (1 P0"), done.out
    calls = {p.name: json.loads(p.read_text()) for p in (tmp_path / "calls").iterdir()}
    assert "fd-safety" in calls and all(Path(c["cwd"]) == project for c in calls.values())
    assert all("--allowedTools" in c["argv"] and "Read,Grep,Glob" in c["argv"] for c in calls.values())
    assert all(c["argv"][c["argv"].index("--model") + 1] == "opus" for c in calls.values())
    out = next((project / "docs" / "research" / "flux-drive").glob("[!.]*/"))  # the run links, not .fluxdrive-runs
    findings = json.loads((out / "findings.json").read_text())
    assert [(f["severity"], f["locations"]) for f in findings["findings"]] == [("P0", ["shop/db.py:15"])]
    run = json.loads((out / "run.json").read_text())
    launched = {name: a for name, a in run["agents"].items() if a["outcome"] != "not-launched"}
    assert set(launched) == set(calls)
    safety = launched["fd-safety"]
    assert safety["provenance"] == {
        "provider": "claude-code",
        "model_family": "claude",
        "model_id": "claude-sonnet-4-6",
    }
    assert (safety["usage"]["tokens_in"], safety["usage"]["tokens_out"]) == (1000, 50)

    history = run_fluxdrive("history", "--run", run["run_id"], "--json", cwd=project)
    assert history.code == 0, history.err
    recorded = json.loads(history.out)
    assert recorded["run"]["runtime"] == "cli-agent"
    assert sorted(c["agent"] for c in recorded["calls"]) == sorted(launched)
    assert recorded["run"]["cost_usd"] == pytest.approx(0.004 * len(launched))


def test_a_missing_cli_stops_the_review_before_anything_is_written(project: Path, bin_dir: Path) -> None:
    done = run_fluxdrive("review", ".", "--yes", "--runtime", "cli-agent", cwd=project)

    assert done.code == 2
    assert done.err.strip().splitlines() == [
        "fluxdrive: error: the claude CLI 'claude' was not found or is not executable "
        "(hint: install Claude Code (npm install -g @anthropic-ai/claude-code) and log in, "
        "or set cli_agent.executable to its path)"
    ]
    assert not (project / "docs").exists()
