"""Nothing outside the project root is read: symlinks out of it, loops, and settings that point away.

Each test plants a real symlink (or a real setting) and runs the real
reader: the LLM tools through a wire-level fake provider (whatever the tools
returned is in the requests the provider received), the static analyzers, a
review of a file that is itself a link, synthesis of reports linked out of
an output directory, the knowledge store and the knowledge base. A marker
string in the outside file must never reach a request, a report or stdout;
a link that stays inside the root keeps working.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.adversarial._support import files_under, review_dir
from tests.conftest import committed_copy, run_fluxdrive
from tests.fakes.llm_server import FakeProvider, Text, ToolCall

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "projects" / "py-webapp"
MARKER = "OUTSIDE-MARKER-7d1f"
SECRET_FILE = f"root:x:0:0:{MARKER}:/root:/bin/bash\n"
LEAKY = f'import subprocess\n\ndef ping(host):\n    return subprocess.check_output("ping " + host, shell=True)  # {MARKER}\n'


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = committed_copy(FIXTURE, tmp_path / "shop")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "passwd").write_text(SECRET_FILE)
    (outside / "tool.py").write_text(LEAKY)
    (root / "shop" / "x.py").symlink_to(outside / "passwd")
    (root / "shop" / "tool.py").symlink_to(outside / "tool.py")
    (root / "shop" / "real.py").write_text(LEAKY.replace(MARKER, "inside"))
    (root / "shop" / "alias.py").symlink_to(root / "shop" / "real.py")  # stays inside: reviewed
    return root


def test_llm_tools_never_send_a_file_linked_out_of_the_root(project: Path, provider: FakeProvider) -> None:
    provider.script(
        "Review task for fd-safety",
        [
            ToolCall("grep", {"pattern": "root:", "glob": "**/*"}),
            ToolCall("grep", {"pattern": "OUTSIDE", "glob": "shop/*"}),
            ToolCall("read_file", {"path": "shop/x.py"}),
            ToolCall("read_file", {"path": "shop/tool.py"}),
            ToolCall("read_file", {"path": "shop/alias.py"}),
            ToolCall("list_files", {"glob": "shop/*"}),
            Text("### Findings Index\nVerdict: safe\n"),
        ],
    )
    done = run_fluxdrive(
        "review", ".", "--yes", "--runtime", "llm", "--model", "openai:gpt-4o", "--agents", "safety", cwd=project
    )
    assert done.code in (0, 1), done.err
    sent = "\n".join(r.raw for r in provider.requests)
    assert MARKER not in sent, "a file outside the root reached the provider"
    results = provider.tool_results("Review task for fd-safety")
    assert any("outside the project root" in r for r in results), "read_file says why it refused"
    assert any("check_output" in r and "alias.py" not in r for r in results), "a link inside the root is read"
    assert MARKER not in done.out + done.err + "".join(files_under(review_dir(project)).values())


def test_static_agents_skip_links_out_of_the_root_and_list_them(project: Path) -> None:
    done = run_fluxdrive("review", ".", "--yes", "--agents", "safety", "--fail-on", "never", cwd=project)
    assert done.code == 0, done.err
    out = review_dir(project)
    assert MARKER not in done.out + done.err + "".join(files_under(out).values())
    findings = json.loads((out / "findings.json").read_text())
    skipped = {f["path"]: f["reason"] for f in findings["skipped_files"]}
    assert "outside the project root" in skipped["shop/x.py"] and "outside the project root" in skipped["shop/tool.py"]
    assert "Not reviewed: 2 file(s)" in done.out
    assert "`shop/tool.py`" in (out / "summary.md").read_text()
    places = {loc for f in findings["findings"] for loc in f["locations"]}
    assert "shop/alias.py:4" in places and "shop/real.py:4" in places, "links inside the root are reviewed"


def test_a_target_that_is_a_link_out_of_the_project_is_refused(project: Path) -> None:
    done = run_fluxdrive("review", "shop/tool.py", "--yes", cwd=project)
    assert done.code == 2 and done.err.count("\n") == 1
    assert "outside" in done.err and MARKER not in done.out + done.err
    assert not (project / "docs").exists()


def test_a_symlink_loop_is_skipped_not_fatal(project: Path) -> None:
    (project / "shop" / "loop_a.py").symlink_to(project / "shop" / "loop_b.py")
    (project / "shop" / "loop_b.py").symlink_to(project / "shop" / "loop_a.py")
    done = run_fluxdrive("review", ".", "--yes", "--fail-on", "never", cwd=project)
    assert done.code == 0, done.err
    assert "Traceback" not in done.err and "internal error" not in done.err
    summary = (review_dir(project) / "summary.md").read_text()
    assert "`shop/loop_a.py`: a broken symlink or a symlink loop" in summary


def test_synthesis_refuses_reports_and_a_channel_linked_out_of_the_root(project: Path, tmp_path: Path) -> None:
    out = project / "reviews" / "foreign"
    out.mkdir(parents=True)
    stolen = tmp_path / "outside" / "report.md"
    stolen.write_text(f'### Findings Index\n- P0 | SF-001 | "x" | {MARKER} leaked | x.py:1\nVerdict: risky\n')
    (out / "fd-safety.md").symlink_to(stolen)
    (out / "fd-quality.md").write_text("### Findings Index\nVerdict: safe\n")
    channel = tmp_path / "outside" / "peer-findings.jsonl"
    channel.write_text(
        json.dumps({"severity": "blocking", "agent": "fd-x", "category": "leak", "summary": MARKER, "file_refs": [],
                    "timestamp": "2026-11-23T10:00:00.000Z", "schema_version": 1}) + "\n"
    )  # fmt: skip
    (out / "peer-findings.jsonl").symlink_to(channel)
    done = run_fluxdrive("synthesize", out, cwd=project)
    assert MARKER not in done.out + done.err
    assert MARKER not in (out / "findings.json").read_text() + (out / "summary.md").read_text()
    findings = json.loads((out / "findings.json").read_text())
    refused = next(a for a in findings["agents"] if a["name"] == "fd-safety")
    assert refused["status"] == "missing" and "outside the project root" in refused["reason"]
    assert "INCOMPLETE" in done.out and done.code == 1, "a refused report makes the review incomplete"


def test_directory_settings_cannot_leave_the_project(project: Path, tmp_path: Path) -> None:
    config = project / ".fluxdrive" / "config.toml"
    config.parent.mkdir()
    config.write_text('[kb]\ndirectory = "../outside-kb"\n')
    done = run_fluxdrive("kb", "remember", "Title", "Some content here.", cwd=project)
    assert done.code == 2 and "kb.directory" in done.err and done.err.count("\n") == 1
    assert not (tmp_path / "outside-kb").exists()

    config.write_text("")
    elsewhere = tmp_path / "elsewhere-kb"
    elsewhere.mkdir()
    (project / ".fluxdrive" / "kb").symlink_to(elsewhere)  # the default directory, linked away
    linked = run_fluxdrive("kb", "remember", "Title", "Some content here.", cwd=project)
    assert linked.code == 2 and "outside" in linked.err
    assert not any(elsewhere.iterdir()), "nothing was written outside the project"

    knowledge = tmp_path / "elsewhere-knowledge"
    knowledge.mkdir()
    (project / ".fluxdrive" / "knowledge").symlink_to(knowledge)
    review = run_fluxdrive("review", "shop/db.py", "--yes", "--fail-on", "never", cwd=project)
    assert review.code == 0, review.err
    assert "knowledge store not used" in review.err
    assert not any(knowledge.iterdir())
