"""``fluxdrive eval mine``: a real repository's history in, fixtures the real loader accepts out.

The repository is built with real git commands: a commit that introduces an
off-by-one, a clean change between it and its fix (which also moves the
buggy line, so the ground truth must be mapped back to the introducing
commit's line numbers), the ``fix:`` commit, and fixes that must be skipped
(docs-only, test-only). Its own config is hostile: ``diff.noprefix`` (a patch
``git apply`` could not read) and a textconv driver that would leave a marker
file if git ever ran it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from fluxdrive.eval import find_fixtures
from fluxdrive.eval.mine_szz import Commit, is_fix
from fluxdrive.eval.mine_szz import severity as severity_of
from fluxdrive.eval.stage import stage
from tests.conftest import CliResult, git

BASE = '"""Shop helpers."""\n\n\ndef total(prices):\n    return sum(prices)\n'
BUG = "\n\ndef average(prices):\n    count = len(prices)\n    return total(prices) / (count + 1)\n"
BUGGY_LINE = "    return total(prices) / (count + 1)"  # line 10 of app.py in the introducing commit


def _commit(root: Path, message: str, files: dict[str, str]) -> str:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD")


@pytest.fixture
def history(tmp_path: Path) -> dict[str, str]:
    root = tmp_path / "shop"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    marker = tmp_path / "textconv-ran"
    git(root, "config", "diff.noprefix", "true")
    git(root, "config", "diff.spy.textconv", f"touch {marker}; cat")
    shas = {"root": _commit(root, "Initial shop", {"app.py": BASE, "README.md": "# Shop\n", ".gitattributes": ""})}
    (root / ".gitattributes").write_text("*.py diff=spy\n")
    shas["intro"] = _commit(root, "Add average", {"app.py": BASE + BUG})
    shas["clean"] = _commit(
        root,
        "Add a rounding helper",
        {"app.py": BASE.replace('"""\n', '"""\nimport math\n', 1) + BUG, "money.py": "def cents(x):\n    return x\n"},
    )
    fixed = BASE.replace('"""\n', '"""\nimport math\n', 1) + BUG.replace("(count + 1)", "count")
    shas["fix"] = _commit(root, "fix: off-by-one in average (closes #7)", {"app.py": fixed})
    _commit(root, "Fix typo in README", {"README.md": "# The shop\n"})
    _commit(root, "fix flaky test", {"tests/test_app.py": "def test_total():\n    assert True\n"})
    shas["repo"] = str(root)
    shas["marker"] = str(marker)
    return shas


def test_mine_writes_szz_fixtures_the_loader_accepts(
    history: dict[str, str], tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    out = tmp_path / "mined"
    done = subprocess.run(
        [sys.executable, "-m", "fluxdrive", "eval", "mine", "--repo", history["repo"], str(out)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "fix commits found: 3 (examined: 3)" in done.stdout
    assert "introducing changes located: 1" in done.stdout
    assert "1 positive, 1 clean" in done.stdout
    assert "fix: docs-only (no code file changed): 1" in done.stdout
    assert "fix: test-only: 1" in done.stdout
    assert not Path(history["marker"]).exists()  # the repository's textconv never ran

    fixtures = {f.id: f for f in find_fixtures(out)}
    positive = fixtures[f"mine-{history['intro'][:10]}"]
    clean = fixtures[f"clean-{history['clean'][:10]}"]
    assert positive.kind == clean.kind == "diff"
    [finding] = positive.truth.findings
    assert (finding.location, finding.severity, finding.category) == ("app.py:10", "P1", "bug")
    assert history["fix"][:10] in finding.description
    assert clean.truth.findings == []
    source = json.loads((positive.root / "ground-truth.json").read_text())["source"]
    assert (source["introducing_commit"], source["fix_commit"]) == (history["intro"], history["fix"])
    assert source["fix_message"].startswith("fix: off-by-one")

    # The ground truth points at the introduced line of the tree a review of the patch sees.
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    _target, work, patch = stage(positive, scratch)
    assert (work / "app.py").read_text().splitlines()[9] == BUGGY_LINE
    assert patch is not None and f"+{BUGGY_LINE}" in patch
    assert sorted(p.name for p in (positive.root / "base").iterdir()) == ["app.py"]

    # The mined suite runs as it is: a false alarm on the clean change is counted, not guessed.
    scored = cli("eval", "run", out, "--json", tmp_path / "scored.json")
    clean_run = json.loads((tmp_path / "scored.json").read_text())["clean_changes"]
    assert clean_run["cases"] == 1 and clean_run["flagged"] == (clean_run["false_alarms"] > 0), clean_run
    assert f"clean changes (no ground truth): 1, false alarms {clean_run['false_alarms']}" in scored.out, scored.out

    again = cli("eval", "mine", "--repo", history["repo"], out)
    assert again.code == 0
    assert "already in OUT (never overwritten): 2" in again.out
    bad = cli("eval", "mine", "--repo", history["repo"], "--since", "last tuesday", out)
    assert bad.code == 2 and "YYYY-MM-DD" in bad.err and "Traceback" not in bad.err
    nowhere = cli("eval", "mine", "--repo", tmp_path / "scratch", tmp_path / "elsewhere")
    assert nowhere.code == 2 and "not a git repository" in nowhere.err


@pytest.mark.parametrize(
    ("subject", "body", "fix", "severity"),
    [
        ("fix: off-by-one in average", "", True, "P1"),
        ("Handle empty input", "Fixes #12", True, "P1"),
        ('Revert "Add cache"', "This reverts commit 0123456789abcdef.", True, "P1"),
        ("Fix crash on empty header", "", True, "P0"),
        ("Fix typo in error message", "", True, "P2"),
        ("Add prefix and suffix options", "We will fix the docs later.", False, "P1"),
    ],
)
def test_fix_detection_and_severity_read_the_message(subject: str, body: str, fix: bool, severity: str) -> None:
    assert is_fix(Commit("0" * 40, ("1" * 40,), subject, body)) is fix
    assert severity_of(subject) == severity
