"""Bad input on every command: one clear line on stderr, exit 2, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

import fluxdrive.cli.findings
from fluxdrive.cli import main
from tests.conftest import run_fluxdrive

UNREADABLE = Path("/proc/self/mem")  # a regular file that fails to read, even for root


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "binary.jsonl").write_bytes(b"\x00\xff\xfe\x00 not text\n")
    (tmp_path / "latin1.jsonl").write_bytes(b'{"summary": "caf\xe9"}\n')
    (tmp_path / "a-file.txt").write_text("x")
    (tmp_path / "dir").mkdir()
    return tmp_path


CASES = [
    # wrong arity
    (
        "findings-write-missing",
        ["findings", "write", "{w}/c.jsonl", "blocking"],
        "missing argument 'AGENT'",
    ),
    ("findings-read-missing", ["findings", "read"], "missing argument 'FILE'"),
    (
        "findings-read-extra",
        ["findings", "read", "{w}/c.jsonl", "extra"],
        "unexpected extra argument",
    ),
    ("findings-timeline-missing", ["findings", "timeline"], "missing argument 'FILE'"),
    (
        "verdicts-write-missing",
        ["verdicts", "write", "{w}/dir", "fd-a"],
        "missing argument 'STATUS'",
    ),
    ("agents-show-missing", ["agents", "show"], "missing argument 'NAME'"),
    (
        "agents-show-extra",
        ["agents", "show", "fd-safety", "fd-quality"],
        "unexpected extra argument",
    ),
    ("config-show-extra", ["config", "show", "extra"], "unexpected extra argument"),
    ("unknown-command", ["nosuch"], "no such command"),
    ("unknown-option", ["findings", "read", "{w}/c.jsonl", "--colour"], "no such option"),
    # unknown severity / status
    (
        "findings-write-severity",
        ["findings", "write", "{w}/c.jsonl", "critical", "fd-a", "cat", "s"],
        "unknown severity 'critical'",
    ),
    (
        "findings-read-severity",
        ["findings", "read", "{w}/c.jsonl", "--severity", "high"],
        "unknown severity filter 'high'",
    ),
    (
        "findings-write-category",
        ["findings", "write", "{w}/c.jsonl", "notable", "fd-a", "Bad_Cat", "s"],
        "not kebab-case",
    ),
    (
        "verdicts-write-status",
        ["verdicts", "write", "{w}/dir", "fd-a", "STUCK", "s"],
        "unknown status 'STUCK'",
    ),
    (
        "verdicts-write-tokens",
        ["verdicts", "write", "{w}/dir", "fd-a", "CLEAN", "s", "--tokens", "many"],
        "invalid value for '--tokens'",
    ),
    # directory instead of file, file instead of directory, missing paths
    ("findings-read-dir", ["findings", "read", "{w}/dir"], "is a directory"),
    (
        "findings-write-dir",
        ["findings", "write", "{w}/dir", "notable", "fd-a", "cat", "s"],
        "is a directory",
    ),
    ("findings-timeline-dir", ["findings", "timeline", "{w}/dir"], "is a directory"),
    (
        "findings-write-no-parent",
        ["findings", "write", "{w}/nope/c.jsonl", "notable", "fd-a", "cat", "s"],
        "does not exist",
    ),
    ("verdicts-list-file", ["verdicts", "{w}/a-file.txt"], "is not a directory"),
    ("verdicts-list-missing", ["verdicts", "{w}/missing"], "not found"),
    (
        "verdicts-write-file",
        ["verdicts", "write", "{w}/a-file.txt", "fd-a", "CLEAN", "s"],
        "is a file",
    ),
    # unreadable and non-UTF-8
    ("findings-read-unreadable", ["findings", "read", str(UNREADABLE)], "cannot read channel"),
    ("findings-read-binary", ["findings", "read", "{w}/binary.jsonl"], "not UTF-8"),
    ("findings-timeline-binary", ["findings", "timeline", "{w}/binary.jsonl"], "not UTF-8"),
    ("findings-read-latin1", ["findings", "read", "{w}/latin1.jsonl"], "not UTF-8"),
    (
        "agents-show-unknown",
        ["agents", "show", "fd-nobody", "--project", "{w}"],
        "unknown agent 'fd-nobody'",
    ),
]


@pytest.mark.parametrize(("name", "argv", "message"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_one_line_exit_2(cli, workspace: Path, name: str, argv: list[str], message: str) -> None:  # type: ignore[no-untyped-def]
    before = sorted(p.relative_to(workspace) for p in workspace.rglob("*"))
    result = cli(*[a.format(w=workspace) for a in argv])
    assert result.code == 2, (result.code, result.err)
    assert result.out == ""
    assert result.err.count("\n") == 1, result.err
    assert result.err.startswith("fluxdrive: error: ")
    assert message.lower() in result.err.lower(), result.err
    assert "Traceback" not in result.err
    after = sorted(p.relative_to(workspace) for p in workspace.rglob("*"))
    assert after == before, "a failed command leaves no file behind"


def test_config_path_that_is_a_directory(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / ".fluxdrive" / "config.toml").mkdir(parents=True)
    result = cli("config", "show", "--project", tmp_path)
    assert result.code == 2 and "is a directory" in result.err and result.err.count("\n") == 1


def test_corrupt_verdict_record_is_a_warning_not_a_failure(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    cli("verdicts", "write", tmp_path, "fd-a", "CLEAN", "ok")
    (tmp_path / "verdicts" / "fd-b.json").write_bytes(b"\xff\xfe")
    result = cli("verdicts", tmp_path)
    assert result.code == 0
    assert "fd-a" in result.out
    assert result.err.startswith("fluxdrive: warning: fd-b.json: unreadable verdict record")


def test_unexpected_errors_are_one_line_without_debug(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    def explode(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(fluxdrive.cli.findings.channel, "read", explode)
    assert main(["findings", "read", str(tmp_path / "c.jsonl")]) == 3
    err = capsys.readouterr().err
    assert err == (
        "fluxdrive: internal error: RuntimeError: disk on fire "
        "(rerun with --debug for the traceback, and please report it)\n"
    )
    with pytest.raises(RuntimeError, match="disk on fire"):
        main(["--debug", "findings", "read", str(tmp_path / "c.jsonl")])


def test_console_script_and_module_entry_points(tmp_path: Path) -> None:
    result = run_fluxdrive("--version")
    assert result.code == 0 and result.out.startswith("fluxdrive ")
    bad = run_fluxdrive("findings", "write", tmp_path / "c.jsonl", "urgent", "fd-a", "cat", "s")
    assert bad.code == 2
    assert bad.err == (
        "fluxdrive: error: unknown severity 'urgent' (hint: use 'blocking' (others must acknowledge it) or 'notable')\n"
    )


def test_bare_command_prints_help_and_succeeds(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli()
    assert result.code == 0
    assert result.out.startswith("Usage: fluxdrive")
