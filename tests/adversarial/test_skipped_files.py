"""Every file a review skips is listed: in summary.md, on the console and in findings.json.

Reproduces the report "skipped files vanish: a 40 MB or 2.1 MB Python file
full of shell=True gives 'Nothing to review ... SAFE'; the size-limit skip
note reaches no output". The static runtime's size limit is
``static.max_file_bytes`` (5,000,000 bytes by default): a 6 MB file is over
it and must be reported as not reviewed (and a review of nothing else must be
INCOMPLETE, never SAFE with exit 0); a 2.1 MB file is under it and must be
reviewed. Binary files and files that are not valid Python are skipped
too, and listed the same way.

Big files are generated in tmp_path at test time (none is committed). The
real ``fluxdrive`` console script runs as a subprocess.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliResult, committed_copy, run_fluxdrive

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "projects" / "py-webapp"
INJECTION = '    return subprocess.check_output("curl " + url, shell=True)\n'


def shell_file(path: Path, size: int) -> Path:
    """A Python file of about ``size`` bytes, nothing but functions running ``"curl " + url`` through a shell."""
    parts, total, i = ["import subprocess\n\n\n"], 0, 0
    while total < size:
        part = f"def fetch_{i}(url):\n{INJECTION}\n\n"
        parts.append(part)
        total += len(part)
        i += 1
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(parts))
    return path


def binary_file(path: Path) -> Path:
    path.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 16)
    return path


def broken_python(path: Path) -> Path:
    path.write_text("import subprocess\n\n\ndef fetch(url:\n" + INJECTION)
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return committed_copy(FIXTURE, tmp_path / "proj")


def review(project: Path, target: str, out: Path, *extra: str) -> CliResult:
    return run_fluxdrive("review", target, "--yes", "-q", "--output-dir", out, *extra, cwd=project)


def findings(out: Path) -> dict[str, Any]:
    return json.loads((out / "findings.json").read_text())


def not_reviewed_section(out: Path) -> str:
    summary = (out / "summary.md").read_text()
    assert "## Not Reviewed" in summary, f"summary.md has no 'Not Reviewed' section:\n{summary[:1500]}"
    return summary.split("## Not Reviewed", 1)[1].split("\n## ", 1)[0]


def console_count(done: CliResult) -> int | None:
    match = re.search(r"^Not reviewed: (\d+) file\(s\)", done.out, re.M)
    return int(match.group(1)) if match else None


def assert_listed(done: CliResult, out: Path, expected: dict[str, str]) -> None:
    """Every skipped file in summary.md (with its reason), counted on the console and in findings.json."""
    section = not_reviewed_section(out)
    for path, reason in expected.items():
        line = next((line for line in section.splitlines() if f"`{path}`" in line), None)
        assert line is not None, f"{path} is not listed under Not Reviewed:\n{section}"
        assert reason in line, f"{path}: the reason {reason!r} is missing: {line}"
    assert console_count(done) == len(expected), f"the console does not count {len(expected)} file(s):\n{done.out}"
    skipped = {entry["path"]: entry["reason"] for entry in findings(out)["skipped_files"]}
    assert set(skipped) == set(expected), skipped
    for path, reason in expected.items():
        assert reason in skipped[path]


def test_a_6mb_file_in_a_project_is_listed_as_not_reviewed(project: Path, tmp_path: Path) -> None:
    shell_file(project / "shop" / "fetch_all.py", 6_000_000)
    out = tmp_path / "out"
    done = review(project, "shop", out)
    assert done.code == 1, done.err  # the small files' P0 findings
    assert_listed(done, out, {"shop/fetch_all.py": "over the 5,000,000-byte limit (static.max_file_bytes)"})
    document = findings(out)
    assert document["complete"] is True, "the other files were reviewed"
    assert any(str(f.get("location", "")).startswith("shop/routes.py") for f in document["findings"])


def test_a_file_that_is_not_reviewed_does_not_crowd_agents_out_of_the_review(project: Path, tmp_path: Path) -> None:
    """The 6 MB file is skipped by every agent, yet triage weighs its 98,000 lines: the review of the rest shrank
    from four agents to one (fd-correctness, fd-performance and fd-quality never looked at the small files)."""
    before = review(project, "shop", tmp_path / "before")
    assert before.code == 1, before.err
    shell_file(project / "shop" / "fetch_all.py", 6_000_000)
    after = review(project, "shop", tmp_path / "after")
    assert after.code == 1, after.err
    launched = [set(findings(tmp_path / run)["agents_launched"]) for run in ("before", "after")]
    assert launched[1] == launched[0], f"agents without the file: {sorted(launched[0])}, with it: {sorted(launched[1])}"


def test_a_single_6mb_file_is_incomplete_never_safe(project: Path, tmp_path: Path) -> None:
    shell_file(project / "fetch_all.py", 6_000_000)
    out = tmp_path / "out"
    # --fail-on never: an incomplete review exits 1 on its own, whatever the verdict
    done = review(project, "fetch_all.py", out, "--fail-on", "never")
    assert done.code == 1, f"nothing was reviewed, yet exit {done.code}: {done.out[:400]}"
    verdict = done.out.splitlines()[0]
    assert "INCOMPLETE" in verdict, verdict
    assert_listed(done, out, {"fetch_all.py": "over the 5,000,000-byte limit (static.max_file_bytes)"})
    document = findings(out)
    assert document["complete"] is False
    assert document["incomplete_reasons"], document


def test_a_2_1mb_file_is_under_the_limit_and_its_injection_is_found(project: Path, tmp_path: Path) -> None:
    shell_file(project / "fetch_all.py", 2_100_000)
    out = tmp_path / "out"
    done = review(project, "fetch_all.py", out)
    assert done.code == 1, done.out[:400] + done.err
    assert console_count(done) is None, done.out
    document = findings(out)
    assert document["skipped_files"] == [] and document["complete"] is True
    p0 = [f for f in document["findings"] if f["severity"] == "P0"]
    assert any("shell" in f["title"] and "fetch_all.py" in json.dumps(f) for f in p0), p0


def test_binary_and_unparsable_files_are_listed_with_their_reason(project: Path, tmp_path: Path) -> None:
    binary_file(project / "shop" / "logo.bin")
    broken_python(project / "shop" / "half_edited.py")
    out = tmp_path / "out"
    done = review(project, "shop", out)
    assert done.code == 1, done.err
    assert_listed(done, out, {"shop/logo.bin": "binary", "shop/half_edited.py": "not valid Python"})
    assert findings(out)["complete"] is True


def test_a_directory_with_nothing_reviewable_is_incomplete(project: Path, tmp_path: Path) -> None:
    folder = project / "vendor"
    shell_file(folder / "fetch_all.py", 6_000_000)
    binary_file(folder / "logo.bin")
    broken_python(folder / "half_edited.py")
    out = tmp_path / "out"
    done = review(project, "vendor", out)
    assert done.code == 1, done.out[:400] + done.err
    assert "INCOMPLETE" in done.out.splitlines()[0]
    assert_listed(
        done,
        out,
        {
            "vendor/fetch_all.py": "over the 5,000,000-byte limit",
            "vendor/logo.bin": "binary",
            "vendor/half_edited.py": "not valid Python",
        },
    )
    assert findings(out)["complete"] is False


def test_a_module_with_one_injection_is_reviewed_by_the_agent_asked_for(project: Path, tmp_path: Path) -> None:
    """100 KB of plain functions and one shell injection, reviewed with ``--agents fd-safety``.

    Triage finds "subprocess" in too small a share of the file to select
    anyone and says "triage selected no agent ... pass --agents to choose
    reviewers" (exit 3) - also when --agents was passed, so the file vanishes
    from review altogether (any module past about 20 KB with one injection).
    """
    parts = ["import subprocess\n\n\ndef fetch(url):\n", INJECTION, "\n\n"]
    parts += [f"def add_{i}(a, b):\n    return a + b\n\n\n" for i in range(100_000 // 36)]
    (project / "big_module.py").write_text("".join(parts))
    out = tmp_path / "out"
    done = review(project, "big_module.py", out, "--agents", "fd-safety")
    assert done.code == 1, f"exit {done.code}: {done.err.strip()}"
    assert any(f["severity"] == "P0" and "shell" in f["title"] for f in findings(out)["findings"])
