"""`fluxdrive eval import ossf-cve`: real OpenSSF CVE Benchmark records, traced by blame to the change that wrote
each weakness, become fixtures the real loader and runner accept; each fix becomes a clean change."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from fluxdrive.eval.fixture import find_fixtures
from tests.eval.test_import import _git

SAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "benchmarks" / "ossf-cve"
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
CLI = [sys.executable, "-m", "fluxdrive", "eval"]


def _commit(repo: Path, patch: Path, message: str) -> str:
    if patch.stat().st_size:
        _git(repo, "apply", "--whitespace=nowarn", "-", stdin=patch.read_text(encoding="utf-8"))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return _git(repo, "rev-parse", "HEAD")


def _source(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """The sample as the importer reads it: the records, and per CVE a repository rebuilt commit by commit."""
    source = tmp_path / "ossf"
    (source / "CVEs").mkdir(parents=True)
    cases: dict[str, Any] = json.loads((SAMPLE / "cases.json").read_text(encoding="utf-8"))
    for key, case in cases.items():
        repo, cut = source / "repos" / key, SAMPLE / "cases" / key
        repo.mkdir(parents=True)
        _git(repo, "init", "-q")
        if case["parent"] != EMPTY_TREE:  # else the weakness was written by the repository's first commit
            if (cut / "base").is_dir():
                shutil.copytree(cut / "base", repo, dirs_exist_ok=True)
            _git(repo, "add", "-A")
            _git(repo, "commit", "-q", "--allow-empty", "-m", "before")
        case["rebuilt_introducing"] = _commit(repo, cut / "introduce.patch", case["introducing_subject"])
        if (cut / "prepatch").is_dir():  # other files the fix touches, as they were at prePatch
            shutil.copytree(cut / "prepatch", repo, dirs_exist_ok=True)
        pre = _commit(repo, cut / "to-prepatch.patch", "later history")
        post = _commit(repo, cut / "fix.patch", "the fix")
        record = json.loads((SAMPLE / "CVEs" / f"{case['cve']}.json").read_text(encoding="utf-8"))
        record["prePatch"]["commit"], record["postPatch"]["commit"] = pre, post
        (source / "CVEs" / f"{case['cve']}.json").write_text(json.dumps(record), encoding="utf-8")
    return source, cases


def test_sample_traces_each_weakness_to_its_change_and_runs(tmp_path: Path) -> None:
    (source, cases), out = _source(tmp_path), tmp_path / "fixtures"
    done = subprocess.run([*CLI, "import", "ossf-cve", str(source), str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:2] == [
        "CVEs seen: 3, imported: 3, weaknesses imported: 3",
        "fixtures written: 3 positive, 3 clean",
    ]

    fixtures = {f.id: f for f in find_fixtures(out)}
    assert all(f.kind == "diff" for f in fixtures.values())
    for key, case in cases.items():
        owner, name = key.lower().split("+")
        positive = fixtures[f"ossf-{owner}-{name}-{case['rebuilt_introducing'][:10]}"]
        shown = [{k: v for k, v in f.model_dump().items() if k in ("location", "category", "cwe")}
                 for f in positive.truth.findings]  # fmt: skip
        assert shown == case["imported"], key  # the same path:line blame found on the real repository
        extra = positive.truth.model_extra or {}
        assert extra["source"]["introducing_commit"] == case["rebuilt_introducing"]
        assert extra["source"]["cves"] == [case["cve"]] and extra["source"]["licence"].startswith("MIT")
        assert extra["source"]["language"] == ("TypeScript" if name == "confinit" else "JavaScript")
        patch = (positive.root / "change.patch").read_text(encoding="utf-8")
        assert patch.split("\n@@", 1)[1] == (SAMPLE / "cases" / key / "introduce.patch").read_text().split("\n@@", 1)[1]
        clean = fixtures[f"ossf-{case['cve'].lower()}-fix"]
        assert clean.truth.findings == [] and (clean.truth.model_extra or {})["source"]["method"] == "fix"
    first_commit = fixtures[f"ossf-justmoon-node-extend-{cases['justmoon+node-extend']['rebuilt_introducing'][:10]}"]
    assert not any((first_commit.root / "base").iterdir()), "a weakness from the first commit: nothing before it"

    ran = subprocess.run([*CLI, "run", str(out), "--json", str(tmp_path / "run.json")], capture_output=True, text=True)
    assert ran.returncode in (0, 1), ran.stderr
    report = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert all(f["error"] is None for f in report["fixtures"]), report["fixtures"]
    assert {k: v["counts"]["expected"] for k, v in report["languages"].items()} == {"JavaScript": 2, "TypeScript": 1}
    assert report["clean_changes"]["cases"] == 3
    assert "language JavaScript" in ran.stdout and "language TypeScript" in ran.stdout

    again = subprocess.run([*CLI, "import", "ossf-cve", str(source), str(out)], capture_output=True, text=True)
    assert again.returncode == 0 and "skipped CVE (6): fixture directory already exists (left as it is)" in again.stdout


def test_hostile_or_broken_records_are_counted_not_followed(tmp_path: Path) -> None:
    source, _ = _source(tmp_path)
    record = json.loads((source / "CVEs" / "CVE-2017-16136.json").read_text(encoding="utf-8"))
    record["prePatch"]["weaknesses"][0]["location"]["file"] = "../../../etc/passwd"
    (source / "CVEs" / "CVE-2017-16136.json").write_text(json.dumps(record), encoding="utf-8")
    (source / "CVEs" / "CVE-2099-0001.json").write_text(json.dumps({"repository": "file:///etc"}), encoding="utf-8")
    (source / "CVEs" / "CVE-2099-0002.json").write_text(
        json.dumps({**record, "repository": "https://github.com/nobody/absent"}), encoding="utf-8"
    )
    planted = tmp_path / "planted"
    option = {**record, "prePatch": {**record["prePatch"], "commit": f"--output={planted}"}}
    (source / "CVEs" / "CVE-2099-0003.json").write_text(json.dumps(option), encoding="utf-8")
    out = tmp_path / "fixtures"
    done = subprocess.run([*CLI, "import", "ossf-cve", str(source), str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "CVEs seen: 6, imported: 2, weaknesses imported: 2"
    assert "skipped CVE (1): a commit named by the data is not a commit id" in lines
    assert not planted.exists(), "a commit id from the data reached git as an option"
    assert "skipped CVE (1): repository is not a github.com URL" in lines
    assert "skipped CVE (1): upstream repository not in the repositories directory" in lines
    assert "skipped CVE (1): no weakness could be traced to a change" in lines
    assert "skipped weakness (1): file not a safe relative path, or line not positive" in lines
    assert not (tmp_path / "etc").exists() and all(p.name.startswith("ossf-") for p in out.iterdir())


def test_bad_source_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    done = subprocess.run([*CLI, "import", "ossf-cve", str(tmp_path / "empty"), str(tmp_path / "o")],
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 2 and "no CVE-*.json file" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    (tmp_path / "CVEs").mkdir()
    (tmp_path / "CVEs" / "CVE-1.json").write_text("{not json", encoding="utf-8")
    done = subprocess.run(
        [*CLI, "import", "ossf-cve", str(tmp_path), str(tmp_path / "o")], capture_output=True, text=True
    )
    assert done.returncode == 2 and "not readable JSON" in done.stderr and "Traceback" not in done.stderr
