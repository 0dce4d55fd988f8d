"""`fluxdrive eval import aacr`: a real AACR-Bench sample becomes fixtures the real loader and runner accept."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fluxdrive.errors import UsageError
from fluxdrive.eval.fixture import find_fixtures
from fluxdrive.eval.importers import Options, import_benchmark

SAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "benchmarks" / "aacr"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def _git(repo: Path, *args: str, stdin: str | None = None) -> str:
    env = {**os.environ, **GIT_ENV}
    done = subprocess.run(["git", *args], cwd=repo, env=env, input=stdin, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def _source(tmp_path: Path) -> Path:
    """The sample as the importer reads it: the dataset, and a repository per PR (merge base, then head)."""
    source = tmp_path / "aacr"
    dataset = json.loads((SAMPLE / "positive_samples.json").read_text(encoding="utf-8"))
    for pr in dataset:
        owner, name = pr["githubPrUrl"].split("/")[3:5]
        repo = source / "repos" / f"{owner}+{name}"
        repo.mkdir(parents=True)
        base = SAMPLE / "prs" / f"{owner}+{name}" / "base"  # absent when the PR only adds files
        if base.is_dir():
            shutil.copytree(base, repo, dirs_exist_ok=True)
        _git(repo, "init", "-q")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "--allow-empty", "-m", "merge base")
        pr["source_commit"] = _git(repo, "rev-parse", "HEAD")
        patch = (SAMPLE / "prs" / f"{owner}+{name}" / "change.patch").read_text(encoding="utf-8")
        _git(repo, "apply", "-", stdin=patch)
        _git(repo, "add", "-A")
        _git(repo, "commit", "-qm", "head")
        pr["target_commit"] = _git(repo, "rev-parse", "HEAD")
    (source / "positive_samples.json").write_text(json.dumps(dataset), encoding="utf-8")
    return source


def test_sample_imports_validates_and_runs(tmp_path: Path) -> None:
    source, out = _source(tmp_path), tmp_path / "fixtures"
    cli = [sys.executable, "-m", "fluxdrive", "eval"]
    done = subprocess.run([*cli, "import", "aacr", str(source), str(out)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "PRs seen: 3, imported: 3, comments imported: 16"

    fixtures = find_fixtures(out)
    assert [f.id for f in fixtures] == [
        "aacr-csharp-ppy-osu-31232",
        "aacr-go-ollama-ollama-9379",
        "aacr-javascript-bluewave-labs-checkmate-1897",
    ]
    assert all(f.kind == "diff" for f in fixtures)
    truth = fixtures[1].truth
    assert truth.model_extra is not None and truth.model_extra["source"]["language"] == "Go"
    assert truth.model_extra["source"]["licence"].startswith("Apache-2.0")
    assert {f.category for fx in fixtures for f in fx.truth.findings} <= {
        "code-defect",
        "maintainability-readability",
        "performance",
        "security-vulnerability",
    }

    report = tmp_path / "run.json"
    ran = subprocess.run([*cli, "run", str(out), "--json", str(report)], capture_output=True, text=True, check=False)
    assert ran.returncode in (0, 1), ran.stderr  # 1: the gate's verdict on the static reviewer, not a failure
    document = json.loads(report.read_text(encoding="utf-8"))
    assert len(document["fixtures"]) == 3

    again = import_benchmark("aacr", source, out, Options())  # existing fixtures are kept, never overwritten
    assert (again.imported, again.skipped) == (0, {"fixture directory already exists (left as it is)": 3})


def test_bad_input_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="unknown benchmark format 'nope'"):
        import_benchmark("nope", tmp_path, tmp_path / "out", Options())
    (tmp_path / "positive_samples.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(UsageError, match="not readable JSON"):
        import_benchmark("aacr", tmp_path, tmp_path / "out", Options())
    (tmp_path / "positive_samples.json").write_text("[]", encoding="utf-8")
    with pytest.raises(UsageError, match="no directory of upstream repositories"):
        import_benchmark("aacr", tmp_path, tmp_path / "out", Options())
