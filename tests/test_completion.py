"""The completion signal contract (PROTOCOL.md section 7), on real files."""

from __future__ import annotations

from pathlib import Path

import pytest

from fluxdrive.contracts import (
    PARTIAL_MARKER,
    SENTINEL,
    AgentOutputWriter,
    CompletionState,
    OutputStatus,
    classify_output,
    inspect,
    output_path,
    partial_path,
    settle,
    write_agent_output,
    write_error_stub,
)

REPORT = '### Findings Index\n- P1 | CR-001 | "DB" | Lost update | a.py:3\nVerdict: needs-changes\n'


def test_writer_leaves_only_the_final_file_with_the_sentinel_last(tmp_path: Path) -> None:
    final = write_agent_output(tmp_path, "fd-correctness", REPORT)
    assert final == tmp_path / "fd-correctness.md"
    assert not partial_path(tmp_path, "fd-correctness").exists()
    text = final.read_text()
    assert text == REPORT + SENTINEL + "\n"
    assert inspect(tmp_path, "fd-correctness").state is CompletionState.COMPLETE


def test_writer_adds_a_newline_before_the_sentinel(tmp_path: Path) -> None:
    final = write_agent_output(tmp_path, "a", "no newline")
    assert final.read_text().splitlines() == ["no newline", SENTINEL]


def test_streaming_writer_is_invisible_until_complete(tmp_path: Path) -> None:
    with AgentOutputWriter(tmp_path, "fd-safety") as writer:
        writer.write("### Findings Index\n")
        assert not output_path(tmp_path, "fd-safety").exists()
        assert partial_path(tmp_path, "fd-safety").read_text() == "### Findings Index\n"
        assert inspect(tmp_path, "fd-safety").state is CompletionState.TRUNCATED
        writer.write("Verdict: safe\n")
        writer.complete()
    assert inspect(tmp_path, "fd-safety").state is CompletionState.COMPLETE


def test_a_crash_inside_the_writer_leaves_the_partial(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), AgentOutputWriter(tmp_path, "fd-x") as writer:
        writer.write('### Findings Index\n- P0 | X-001 | "S" | half')
        raise RuntimeError("agent crashed")
    assert not output_path(tmp_path, "fd-x").exists()
    assert partial_path(tmp_path, "fd-x").exists()


def test_error_stub(tmp_path: Path) -> None:
    write_error_stub(tmp_path, "fd-quality", "timed out after 300 s")
    result = classify_output(output_path(tmp_path, "fd-quality"))
    assert result.status is OutputStatus.ERROR
    assert "timed out after 300 s" in result.reason
    assert result.has_sentinel


# --- the section 7 table, row by row ---------------------------------------


def test_md_with_sentinel_is_complete(tmp_path: Path) -> None:
    write_agent_output(tmp_path, "a", REPORT)
    result = settle(tmp_path, "a")
    assert result.state is CompletionState.COMPLETE and result.warning is None


def test_md_without_sentinel_is_accepted_with_a_warning(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(REPORT)
    found = inspect(tmp_path, "a")
    assert found.state is CompletionState.UNSIGNED
    assert found.warning and "no completion sentinel" in found.warning
    assert settle(tmp_path, "a").state is CompletionState.UNSIGNED
    assert (tmp_path / "a.md").read_text() == REPORT


def test_partial_with_sentinel_means_the_rename_failed(tmp_path: Path) -> None:
    (tmp_path / "a.md.partial").write_text(REPORT + SENTINEL + "\n")
    assert inspect(tmp_path, "a").state is CompletionState.RENAME_PENDING
    result = settle(tmp_path, "a")
    assert result.state is CompletionState.COMPLETE and not result.partial
    assert (tmp_path / "a.md").read_text() == REPORT + SENTINEL + "\n"
    assert not (tmp_path / "a.md.partial").exists()


def test_partial_without_sentinel_is_kept_as_partial_malformed(tmp_path: Path) -> None:
    (tmp_path / "a.md.partial").write_text('### Findings Index\n- P1 | CR-001 | "DB" | Lost upd')
    result = settle(tmp_path, "a")
    assert result.state is CompletionState.COMPLETE and result.partial
    text = (tmp_path / "a.md").read_text()
    assert PARTIAL_MARKER in text and text.rstrip().endswith(SENTINEL)
    classified = classify_output(tmp_path / "a.md")
    assert classified.partial
    assert classified.status is OutputStatus.MALFORMED, "a partial is never synthesized as complete"
    assert classified.usable_index
    assert [e.id for e in classified.index.entries] == ["CR-001"]
    assert not (tmp_path / "a.md.partial").exists()


def test_empty_partial_becomes_an_error_stub(tmp_path: Path) -> None:
    (tmp_path / "a.md.partial").write_text("")
    assert inspect(tmp_path, "a").state is CompletionState.EMPTY_PARTIAL
    settle(tmp_path, "a", reason="timed out after 300 s")
    classified = classify_output(tmp_path / "a.md")
    assert classified.status is OutputStatus.ERROR
    assert "timed out after 300 s" in classified.reason
    assert not (tmp_path / "a.md.partial").exists()


def test_neither_file_means_never_started(tmp_path: Path) -> None:
    assert inspect(tmp_path, "a").state is CompletionState.NEVER_STARTED
    settle(tmp_path, "a")
    classified = classify_output(tmp_path / "a.md")
    assert classified.status is OutputStatus.ERROR
    assert "never started" in classified.reason


def test_stale_partial_next_to_a_final_file_is_removed(tmp_path: Path) -> None:
    write_agent_output(tmp_path, "a", REPORT)
    (tmp_path / "a.md.partial").write_text("stale retry output")
    settle(tmp_path, "a")
    assert not (tmp_path / "a.md.partial").exists()
    assert (tmp_path / "a.md").read_text().startswith("### Findings Index")


@pytest.mark.parametrize(
    "setup",
    ["complete", "unsigned", "rename-pending", "truncated", "empty", "none"],
)
def test_exactly_one_md_per_agent_after_settle(tmp_path: Path, setup: str) -> None:
    files = {
        "complete": lambda: write_agent_output(tmp_path, "a", REPORT),
        "unsigned": lambda: (tmp_path / "a.md").write_text(REPORT),
        "rename-pending": lambda: (tmp_path / "a.md.partial").write_text(REPORT + SENTINEL),
        "truncated": lambda: (tmp_path / "a.md.partial").write_text("### Findings"),
        "empty": lambda: (tmp_path / "a.md.partial").write_text(""),
        "none": lambda: None,
    }
    files[setup]()
    settle(tmp_path, "a")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.md"]
