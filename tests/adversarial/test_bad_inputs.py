"""Bad inputs end in one clear line (exit 2), never in "internal error ... please report it" (exit 3).

Every case runs the real ``fluxdrive`` console script as a subprocess and
checks the contract of the CLI's error boundary: the exit code, stderr is
exactly ONE line starting with ``fluxdrive: error:`` that names the problem
(the file, flag or key at fault), short enough to read, and neither
"Traceback" nor "internal error" anywhere. Inputs that are not an error for
the command (a symlink loop in a reviewed project, a manifest nested too deep
to parse) must not block it: the review ends with a verdict (exit 0 or 1).

Every case is tallied; ``pytest -s`` prints "bad inputs tried / handled with a
clear line" at the end (``test_zz_figure``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import CliResult, committed_copy, run_fluxdrive

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "projects" / "py-webapp"
EXE = Path(sys.executable).parent / "fluxdrive"
DEPTH = 100_000
# A line a person can read: the longest path Linux accepts. The MCP server caps its error lines at 1,000 characters.
MAX_LINE = 4_096
NO_ANSWER = "no answer within the time limit"

# case id -> handled with a clear line (filled as the cases run; printed by test_zz_figure)
TALLY: dict[str, bool] = {}


# --------------------------------------------------------------------------
# contracts


def _noise(done: CliResult) -> list[str]:
    both = done.out + done.err
    return [word for word in ("Traceback", "internal error") if word in both]


def _error_line_problems(done: CliResult, code: int, names: Sequence[str]) -> list[str]:
    problems = [f"{word!r} in the output" for word in _noise(done)]
    if done.code != code:
        problems.append(f"exit {done.code}, expected {code}")
    lines = done.err.splitlines()
    if len(lines) != 1:
        problems.append(f"stderr has {len(lines)} lines, expected exactly one")
    line = lines[0] if lines else ""
    if not line.startswith("fluxdrive: error:"):
        problems.append("stderr does not start with 'fluxdrive: error:'")
    problems += [f"the line does not name {name!r}" for name in names if name.lower() not in line.lower()]
    if len(line) > MAX_LINE:
        problems.append(f"the line is {len(line):,} characters long (a person reads at most {MAX_LINE:,})")
    return problems


def expect_error_line(case: str, done: CliResult, *, names: Sequence[str], code: int = 2) -> None:
    """Exit ``code`` with exactly one ``fluxdrive: error:`` line naming every one of ``names``."""
    problems = _error_line_problems(done, code, names)
    TALLY[case] = not problems
    assert not problems, f"{case}: {'; '.join(problems)}\nexit {done.code}\nstderr: {done.err[:1500]!r}"


def expect_handled(case: str, done: CliResult, *, names: Sequence[str], ok: tuple[int, ...] = (0, 1)) -> None:
    """Not an error for this command: it goes on (an exit in ``ok``, no crash); or, at most, one clear line (exit 2)."""
    if done.code in ok and not _noise(done):
        TALLY[case] = True
        return
    problems = [f"exit {done.code}, expected one of {ok} (or exit 2 with one clear line)"]
    problems += _error_line_problems(done, 2, names)
    TALLY[case] = done.code == 2 and len(problems) == 1
    assert TALLY[case], f"{case}: {'; '.join(problems)}\nstderr: {done.err[:1500]!r}"


# --------------------------------------------------------------------------
# running the CLI

_ENTRY = "import json, sys\nfrom fluxdrive.cli import run\nsys.argv = ['fluxdrive', *json.load(sys.stdin)]\nrun()\n"


def run_entry_point(*args: str | Path, cwd: Path) -> CliResult:
    """The console script's entry point (``fluxdrive.cli:run``) in a real process, its argv passed over stdin.

    Why not argv: the kernel cannot carry these arguments. A NUL byte ends a C
    string, and one argument may hold at most 128 KiB (MAX_ARG_STRLEN), so a
    1 MB TARGET never reaches a program from a shell; it does reach it from
    an MCP client or a library caller, which is what this stands in for.
    """
    proc = subprocess.run(
        [sys.executable, "-c", _ENTRY],
        input=json.dumps([str(a) for a in args]),
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        check=False,
    )
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


def run_bounded(*args: str | Path, cwd: Path, seconds: float = 5) -> CliResult:
    """``fluxdrive ARGS`` killed (by its own pid) if it has not answered within ``seconds``: a read that never ends."""
    try:
        proc = subprocess.run(
            [str(EXE), *[str(a) for a in args]], capture_output=True, text=True, cwd=cwd, timeout=seconds, check=False
        )
    except subprocess.TimeoutExpired as exc:
        err = exc.stderr.decode() if isinstance(exc.stderr, bytes) else exc.stderr or ""
        return CliResult(-9, "", f"{err}({NO_ANSWER}: {seconds} s)\n")
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return committed_copy(FIXTURE, tmp_path / "proj")


def _nested(opening: str, closing: str, depth: int = DEPTH) -> str:
    return opening * depth + closing * depth


def _write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def _data_dir() -> Path:
    """The fluxdrive data directory under the autouse fixture's XDG_DATA_HOME."""
    return Path(os.environ["XDG_DATA_HOME"]) / "fluxdrive"


# --------------------------------------------------------------------------
# one clear line: the cases
#
# Each case prepares its files and returns the argv; ``names`` are what the
# line must name; ``after`` checks the disk (nothing written outside).

Prepare = Callable[[Path, Path], Sequence[str | Path]]


@dataclass(frozen=True)
class Case:
    prepare: Prepare
    names: tuple[str, ...]
    code: int = 2
    after: Callable[[Path, Path], None] | None = None
    bounded: bool = False
    entry_point: bool = False


def _deep_project_config(project: Path, tmp: Path) -> list[str | Path]:
    _write(project / ".fluxdrive" / "config.toml", f"x = {_nested('[', ']')}\n")
    return ["review", "shop", "--yes", "-q", "--output-dir", tmp / "out"]


def _deep_user_config(project: Path, tmp: Path) -> list[str | Path]:
    _write(Path(os.environ["XDG_CONFIG_HOME"]) / "fluxdrive" / "config.toml", f"x = {_nested('[', ']')}\n")
    return ["config", "show"]


def _deep_set(project: Path, tmp: Path) -> list[str | Path]:
    # 50,000 deep: 100 KB, what one argument can carry; any depth past ~1,000 overflows the parser's recursion
    return ["config", "show", "--set", f"dispatch.timeout_local_s={_nested('[', ']', 50_000)}"]


def _deep_agent(project: Path, tmp: Path) -> list[str | Path]:
    body = f"---\nname: fd-deep\nprefix: DEEP\nx: {_nested('[', ']')}\n---\nReview things.\n"
    _write(project / ".fluxdrive" / "agents" / "fd-deep.md", body)
    return ["agents", "list"]


def _deep_findings_json(project: Path, tmp: Path) -> list[str | Path]:
    path = _write(tmp / "deep" / "findings.json", '{"findings": ' + _nested("[", "]") + "}")
    return ["feedback", "accept", path, "P0-1"]


def _timeout_config(project: Path, tmp: Path) -> list[str | Path]:
    _write(project / ".fluxdrive" / "config.toml", "[dispatch]\ntimeout_local_s = 1e400\n")
    return ["review", "shop", "--yes", "-q", "--output-dir", tmp / "out"]


def _history_garbage(project: Path, tmp: Path) -> list[str | Path]:
    _write(_data_dir() / "history.db", os.urandom(8192))
    return ["history"]


def _history_directory(project: Path, tmp: Path) -> list[str | Path]:
    (_data_dir() / "history.db").mkdir(parents=True)
    return ["history"]


def _fifo(tmp: Path) -> Path:
    path = tmp / "pipe"
    os.mkfifo(path)
    return path


def _feedback_file(content: str | bytes) -> Prepare:
    def prepare(project: Path, tmp: Path) -> list[str | Path]:
        return ["feedback", "accept", _write(tmp / "run" / "findings.json", content), "P0-1"]

    return prepare


def _evil_channel(project: Path, tmp: Path) -> list[str | Path]:
    (tmp / "ch").mkdir()
    return ["findings", "write", tmp / "ch" / "peer.jsonl", "blocking", "../../evil", "auth-bypass", "A finding."]


def _evil_verdict(project: Path, tmp: Path) -> list[str | Path]:
    (tmp / "run" / "verdicts").mkdir(parents=True)
    return ["verdicts", "write", tmp / "run", "../../evil", "CLEAN", "fine"]


def _nothing_named_evil(project: Path, tmp: Path) -> None:
    found = [*tmp.rglob("*evil*"), *tmp.parent.glob("*evil*")]
    assert not found, f"written outside: {found}"


def _kb_config(key: str, value: str) -> Prepare:
    section, _, name = key.partition(".")

    def prepare(project: Path, tmp: Path) -> list[str | Path]:
        _write(project / ".fluxdrive" / "config.toml", f'[{section}]\n{name} = "{value}"\n')
        if section == "kb":
            return ["kb", "remember", "A title", "Something worth remembering.", "--project", project]
        return ["review", "shop", "--yes", "-q", "--output-dir", tmp / "out"]

    return prepare


def _kb_symlink_out(project: Path, tmp: Path) -> list[str | Path]:
    (tmp / "elsewhere").mkdir()
    (project / "kb-link").symlink_to(tmp / "elsewhere")
    _write(project / ".fluxdrive" / "config.toml", '[kb]\ndirectory = "kb-link"\n')
    return ["kb", "remember", "A title", "Something worth remembering.", "--project", project]


def _nothing_outside(project: Path, tmp: Path) -> None:
    created = [d for d in (project.parent / "outside", tmp / "abs-kb") if d.exists()]
    written = list((tmp / "elsewhere").rglob("*")) if (tmp / "elsewhere").is_dir() else []
    assert not created and not written, f"written outside the project: {created or written}"


def _user_setting(section: str, line: str) -> Prepare:
    """A setting in the user's own config.toml (where addresses are honoured), then a review."""

    def prepare(project: Path, tmp: Path) -> list[str | Path]:
        _write(Path(os.environ["XDG_CONFIG_HOME"]) / "fluxdrive" / "config.toml", f"[{section}]\n{line}\n")
        return ["review", "shop", "--yes", "-q", "--output-dir", tmp / "out"]

    return prepare


def _fifo_project_config(project: Path, tmp: Path) -> list[str | Path]:
    (project / ".fluxdrive").mkdir()
    os.mkfifo(project / ".fluxdrive" / "config.toml")
    return ["review", "shop", "--yes", "-q", "--output-dir", tmp / "out"]


def _fifo_agent(project: Path, tmp: Path) -> list[str | Path]:
    (project / ".fluxdrive" / "agents").mkdir(parents=True)
    os.mkfifo(project / ".fluxdrive" / "agents" / "fd-pipe.md")
    return ["agents", "list"]


def _ground_truth(content: str) -> Prepare:
    def prepare(project: Path, tmp: Path) -> list[str | Path]:
        fixture = tmp / "evals" / "hostile"
        _write(fixture / "project" / "app.py", "x = 1\n")
        _write(fixture / "ground-truth.json", content)
        return ["eval", "run", fixture]

    return prepare


PROJECT_COMMANDS = {
    "knowledge list": ["knowledge", "list"],
    "kb remember": ["kb", "remember", "A title", "Something worth remembering."],
    "kb process": ["kb", "process"],
    "kb analyze": ["kb", "analyze"],
    "kb apply": ["kb", "apply"],
    "kb status": ["kb", "status"],
    "kb review": ["kb", "review"],
    "agents list": ["agents", "list"],
    "config show": ["config", "show"],
    "history": ["history"],
}


def _missing_project(command: list[str]) -> Prepare:
    return lambda project, tmp: [*command, "--project", "/nonexistent/fluxdrive-project"]


CASES: dict[str, Case] = {
    # nesting too deep to parse
    "100,000-deep array in .fluxdrive/config.toml (review)": Case(_deep_project_config, ("config.toml", "deep")),
    "100,000-deep array in the user config.toml": Case(_deep_user_config, ("config.toml", "deep")),
    "50,000-deep array in --set": Case(_deep_set, ("--set",)),
    "100,000-deep YAML in an agent definition": Case(_deep_agent, ("fd-deep.md",)),
    "100,000-deep findings.json for feedback": Case(_deep_findings_json, ("findings.json",)),
    # disk full
    "findings write /dev/full": Case(
        lambda p, t: ["findings", "write", "/dev/full", "blocking", "fd-safety", "auth-bypass", "A finding."],
        ("/dev/full", "No space left on device"),
    ),
    # history database unusable
    "history on a garbage history.db": Case(_history_garbage, ("history",)),
    "history on a history.db that is a directory": Case(_history_directory, ("history",)),
    # timeouts that are not numbers of seconds
    "--timeout nan": Case(
        lambda p, t: ["review", "shop", "--yes", "-q", "--timeout", "nan", "--output-dir", t / "out"], ("--timeout",)
    ),
    "--timeout 1e400 (inf)": Case(
        lambda p, t: ["review", "shop", "--yes", "-q", "--timeout", "1e400", "--output-dir", t / "out"],
        ("--timeout",),
    ),
    "timeout_local_s = 1e400 in config.toml": Case(_timeout_config, ("timeout_local_s",)),
    # reads that never end
    "findings read /dev/zero": Case(lambda p, t: ["findings", "read", "/dev/zero"], ("/dev/zero",), bounded=True),
    "findings read a FIFO": Case(lambda p, t: ["findings", "read", _fifo(t)], ("pipe",), bounded=True),
    "feedback accept a FIFO": Case(lambda p, t: ["feedback", "accept", _fifo(t), "P0-1"], ("pipe",), bounded=True),
    # feedback on a findings.json fluxdrive did not write
    "feedback: findings.json is not JSON": Case(_feedback_file("{garbage"), ("findings.json",)),
    "feedback: findings.json is binary": Case(_feedback_file(bytes(range(256)) * 4), ("findings.json",)),
    "feedback: improvements is a number": Case(
        _feedback_file('{"findings": [], "improvements": 5}'), ("findings.json",)
    ),
    "feedback: a finding's agents is a number": Case(
        _feedback_file('{"findings": [{"id": "P0-1", "agents": 5}]}'), ("findings.json",)
    ),
    "feedback: a finding's agents is a string": Case(
        _feedback_file('{"findings": [{"id": "P0-1", "agents": "fd-safety"}]}'), ("findings.json",)
    ),
    "feedback: a finding's agents are objects": Case(
        _feedback_file('{"findings": [{"id": "P0-1", "agents": [{"name": "fd-safety"}]}]}'), ("findings.json",)
    ),
    "feedback: finding ids are numbers": Case(
        _feedback_file('{"findings": [5, {"id": 3}, {"id": "P1-1"}]}'), ("findings.json",)
    ),
    # --project that does not exist: never silently '/'
    **{
        f"{name} --project /nonexistent": Case(_missing_project(command), ("/nonexistent/fluxdrive-project",))
        for name, command in PROJECT_COMMANDS.items()
    },
    # TARGET the kernel cannot pass in argv (run through the entry point), and the longest it can
    "TARGET with a NUL byte": Case(
        lambda p, t: ["review", "shop/routes.py\0.bak", "--yes", "-q", "--output-dir", t / "out"],
        ("NUL",),
        entry_point=True,
    ),
    "TARGET 1 MB long": Case(
        lambda p, t: ["review", "x" * 1_000_000, "--yes", "-q", "--output-dir", t / "out"],
        ("not found",),
        entry_point=True,
    ),
    "TARGET 120 KB long (argv)": Case(
        lambda p, t: ["review", "x" * 120_000, "--yes", "-q", "--output-dir", t / "out"], ("not found",)
    ),
    # names that would climb out of a directory
    "findings write agent ../../evil": Case(_evil_channel, ("../../evil",), after=_nothing_named_evil),
    "verdicts write agent ../../evil": Case(_evil_verdict, ("../../evil",), after=_nothing_named_evil),
    # directories in the project's config that leave the project
    'kb.directory = "../outside"': Case(
        _kb_config("kb.directory", "../outside"), ("kb.directory",), after=_nothing_outside
    ),
    "kb.directory = an absolute path": Case(
        lambda p, t: _kb_config("kb.directory", str(t / "abs-kb"))(p, t), ("kb.directory",), after=_nothing_outside
    ),
    "kb.directory = a symlink out of the project": Case(_kb_symlink_out, ("kb.directory",), after=_nothing_outside),
    'knowledge.directory = "../outside" (review)': Case(
        _kb_config("knowledge.directory", "../outside"), ("knowledge.directory",), after=_nothing_outside
    ),
    # addresses the Redis client cannot use (the user's own config: a project's is ignored anyway)
    'channel.url = "redis://[::1"': Case(_user_setting("channel", 'url = "redis://[::1"'), ("channel.url",)),
    'channel.url = "file:///etc/passwd"': Case(
        _user_setting("channel", 'url = "file:///etc/passwd"'), ("channel.url", "redis://")
    ),
    'dispatch.rate_limit_url = "redis://h:99999"': Case(
        _user_setting("dispatch", 'rate_limit_url = "redis://h:99999"'), ("rate_limit_url",)
    ),
    # numbers past Python's int-string limit (4,300 digits)
    "--set dispatch.max_concurrency=<5,000 digits>": Case(
        lambda p, t: ["config", "show", "--set", "dispatch.max_concurrency=" + "9" * 5_000], ("--set", "digits")
    ),
    "max_concurrency = <5,000 digits> in the user config.toml": Case(
        _user_setting("dispatch", "max_concurrency = " + "9" * 5_000), ("config.toml", "digits")
    ),
    # eval fixtures
    "100,000-deep ground-truth.json (eval run)": Case(
        _ground_truth('{"fixture_id": ' + _nested("[", "]") + "}"), ("ground-truth.json", "deep")
    ),
    "100,000-digit number in ground-truth.json (eval run)": Case(
        _ground_truth('{"fixture_id": 1' + "0" * 100_000 + "}"), ("ground-truth.json", "digits")
    ),
    # FIFOs where the project's files belong: refused at once, never waited on
    "FIFO as .fluxdrive/config.toml (review)": Case(
        _fifo_project_config, ("config.toml", "not a regular file"), bounded=True
    ),
    "FIFO as an agent definition (agents list)": Case(_fifo_agent, ("fd-pipe.md", "not a regular file"), bounded=True),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_input_ends_in_one_clear_line(case: str, project: Path, tmp_path: Path) -> None:
    spec = CASES[case]
    args = spec.prepare(project, tmp_path)
    if spec.entry_point:
        done = run_entry_point(*args, cwd=project)
    elif spec.bounded:
        done = run_bounded(*args, cwd=project)
    else:
        done = run_fluxdrive(*args, cwd=project)
    expect_error_line(case, done, names=spec.names, code=spec.code)
    if spec.after is not None:
        spec.after(project, tmp_path)


# --------------------------------------------------------------------------
# nesting too deep in the project under review (or fluxdrive's own state in it): not an error for the command


def _review(project: Path, tmp: Path, target: str = "shop") -> CliResult:
    return run_fluxdrive("review", target, "--yes", "-q", "--output-dir", tmp / "out", cwd=project)


DEEP_IN_PROJECT: dict[str, tuple[str, str, Callable[[Path, Path], CliResult], str]] = {
    # case: (file, content, command, what a line would name)
    "100,000-deep array in the project's pyproject.toml (review)": (
        "pyproject.toml",
        f"[project]\nname = 'shop'\n[tool.x]\ny = {_nested('[', ']')}\n",
        lambda p, t: _review(p, t, "."),
        "pyproject.toml",
    ),
    "100,000-deep array in the project's package.json (review)": (
        "package.json",
        '{"dependencies": ' + _nested("[", "]") + "}",
        lambda p, t: _review(p, t, "."),
        "package.json",
    ),
    "100,000-deep list in .fluxdrive/domains.yaml (review)": (
        ".fluxdrive/domains.yaml",
        f"cache_version: 1\noverride: true\ndomains: {_nested('[', ']')}\n",
        _review,
        "domains.yaml",
    ),
    "100,000-deep YAML in a knowledge entry (review)": (
        ".fluxdrive/knowledge/deep.md",
        f"---\ntitle: t\nagents: {_nested('[', ']')}\n---\nA heuristic.\n",
        _review,
        "deep.md",
    ),
    "100,000-deep JSON in a remember-queue item (kb process)": (
        ".fluxdrive/kb/remember-queue/01795467191994296884-1-deep.json",
        '{"title": ' + _nested("[", "]") + "}",
        lambda p, t: run_fluxdrive("kb", "process", cwd=p),
        "deep.json",
    ),
}


@pytest.mark.parametrize("case", list(DEEP_IN_PROJECT))
def test_deep_nesting_in_the_project_does_not_crash_the_command(case: str, project: Path, tmp_path: Path) -> None:
    relative, content, command, name = DEEP_IN_PROJECT[case]
    _write(project / relative, content)
    done = command(project, tmp_path)
    if done.code < 0:
        TALLY[case] = False
        pytest.fail(f"{case}: killed by signal {-done.code} (a C parser overflowed the stack); stderr: {done.err!r}")
    expect_handled(case, done, names=(name,))


# --------------------------------------------------------------------------
# a symlink loop: a skipped file, not an error


def test_a_symlink_loop_in_a_reviewed_directory_is_listed_as_not_reviewed(project: Path, tmp_path: Path) -> None:
    (project / "shop" / "loop1").symlink_to("loop2")
    (project / "shop" / "loop2").symlink_to("loop1")
    out = tmp_path / "out"
    case = "symlink loop in the reviewed directory"
    TALLY[case] = False  # until every check below has passed
    done = run_fluxdrive("review", "shop", "--yes", "-q", "--output-dir", out, cwd=project)
    assert done.code in (0, 1), done.err
    assert not _noise(done), done.err
    assert done.out.startswith("Verdict:")
    summary = (out / "summary.md").read_text()
    not_reviewed = summary.split("## Not Reviewed", 1)[1].split("\n## ", 1)[0]
    for name in ("shop/loop1", "shop/loop2"):
        assert f"`{name}`" in not_reviewed and "symlink loop" in not_reviewed, summary[:1500]
    assert re.search(r"^Not reviewed: 2 file\(s\)", done.out, re.M), done.out
    TALLY[case] = True


def test_a_symlink_loop_at_the_project_root_is_no_error_of_the_domain_cache(project: Path, tmp_path: Path) -> None:
    (project / "loop").symlink_to("loop")
    out = tmp_path / "out"
    case = "symlink loop at the project root"
    TALLY[case] = False  # until every check below has passed
    done = run_fluxdrive("review", ".", "--yes", "--output-dir", out, cwd=project)
    assert done.code in (0, 1) and not _noise(done), done.err
    assert "`loop`" in (out / "summary.md").read_text()
    # The loop is a skipped file, not a problem of .fluxdrive/domains.yaml (which is fine and must be reused).
    assert "Too many levels of symbolic links" not in done.err, done.err
    assert "domain cache" not in done.err, done.err
    again = run_fluxdrive("review", ".", "--yes", "--output-dir", out, cwd=project)
    assert again.code in (0, 1) and "domain cache" not in again.err, again.err
    TALLY[case] = True


# --------------------------------------------------------------------------
# a full (or read-only) output disk, and no lock left behind

_DISK_SCRIPT = """
mount -t tmpfs -o "$FD_MOUNT_OPTIONS" tmpfs "$FD_MOUNT" || exit 90
"$FD_EXE" review shop --yes -q --output-dir "$FD_MOUNT/out" >"$FD_RESULTS/1.out" 2>"$FD_RESULTS/1.err"
echo $? >"$FD_RESULTS/1.code"
mount -o remount,rw,size=16m "$FD_MOUNT" || exit 91
"$FD_EXE" review shop --yes -q --output-dir "$FD_MOUNT/out" >"$FD_RESULTS/2.out" 2>"$FD_RESULTS/2.err"
echo $? >"$FD_RESULTS/2.code"
"""


def _namespace() -> list[str] | None:
    """``unshare`` arguments giving a private mount namespace (root: plain; else a user namespace), or None."""
    unshare = shutil.which("unshare")
    if unshare is None or shutil.which("mount") is None:
        return None
    prefix = [unshare, "--mount"] if os.geteuid() == 0 else [unshare, "--map-root-user", "--mount"]
    probe = subprocess.run([*prefix, "true"], capture_output=True, check=False)
    return prefix if probe.returncode == 0 else None


@pytest.mark.parametrize("options", ["size=16k", "size=64k", "ro,size=1m"])
def test_a_full_or_read_only_output_disk_is_one_line_and_leaves_no_lock(
    options: str, project: Path, tmp_path: Path
) -> None:
    """A tiny tmpfs, mounted in a private mount namespace (it vanishes with the process: nothing to unmount).

    The first run fills it (or finds it read-only) and must end in one line;
    the tmpfs is then grown (and made writable) and a second run on the same
    output directory must not be blocked by a lock the first one left.
    Without unshare/mount rights this is skipped; ``findings write /dev/full``
    above covers the full disk as the channel sees it either way.
    """
    prefix = _namespace()
    if prefix is None:
        pytest.skip("no private mount namespace (unshare) here to mount a tiny tmpfs in")
    mount, results = tmp_path / "disk", tmp_path / "results"
    mount.mkdir()
    results.mkdir()
    env = {
        **os.environ,
        "FD_MOUNT": str(mount),
        "FD_MOUNT_OPTIONS": options,
        "FD_RESULTS": str(results),
        "FD_EXE": str(EXE),
    }
    proc = subprocess.run(
        [*prefix, "sh", "-c", _DISK_SCRIPT], cwd=project, env=env, capture_output=True, timeout=120, check=False
    )
    if proc.returncode in (90, 91):
        pytest.skip(f"cannot mount or remount a tmpfs here: {proc.stderr.decode(errors='replace').strip()}")

    def result(n: int) -> CliResult:
        return CliResult(
            int((results / f"{n}.code").read_text()),
            (results / f"{n}.out").read_text(),
            (results / f"{n}.err").read_text(),
        )

    reason = "Read-only file system" if options.startswith("ro") else "No space left on device"
    expect_error_line(f"output on a tmpfs mounted {options}", result(1), names=(reason,))
    second = result(2)
    assert second.code in (0, 1), f"the second run was blocked: {second.err}"
    assert second.out.startswith("Verdict:") and "in use by another fluxdrive run" not in second.err


# --------------------------------------------------------------------------
# what a run killed with -9 leaves behind


def test_leftover_tmp_files_of_a_killed_run_are_read_past_and_cleaned(project: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = run_fluxdrive("review", "shop", "--yes", "-q", "--output-dir", out, cwd=project)
    assert first.code in (0, 1), first.err
    # what atomic writes interrupted by kill -9 leave: half-written temporaries beside the real files
    leftovers = [out / "verdicts" / ".fd-safety.json.abc.tmp", out / ".run.json.x.tmp"]
    leftovers[0].write_text('{"agent": "fd-safety", "status": "CLE')
    leftovers[1].write_text('{"run_id": "half')
    listed = run_fluxdrive("verdicts", out, cwd=project)
    TALLY["leftover verdicts/*.tmp (verdicts)"] = listed.code == 0 and not _noise(listed)
    assert listed.code == 0 and not _noise(listed), listed.err
    assert "fd-safety" in listed.out and listed.err == ""
    again = run_fluxdrive("review", "shop", "--yes", "-q", "--output-dir", out, cwd=project)
    TALLY["leftover verdicts/*.tmp (new review)"] = again.code in (0, 1) and not any(p.exists() for p in leftovers)
    assert again.code in (0, 1), again.err
    assert not [p.name for p in leftovers if p.exists()], "the next run sweeps a killed run's temporaries"


# --------------------------------------------------------------------------
# the figure


def figures() -> list[str]:
    """Bad inputs tried / handled with a clear line, over the cases that ran (like test_secrets.figures)."""
    if not TALLY:
        return []
    lines = [f"bad inputs tried / handled with a clear line: {len(TALLY)} / {sum(TALLY.values())}"]
    lines += [f"  not handled: {case}" for case, ok in TALLY.items() if not ok]
    return lines


# --------------------------------------------------------------------------
# an MCP request nested past the SDK's parser: answered, never left waiting


def test_an_mcp_call_nested_200_deep_is_answered_with_an_error(project: Path, tmp_path: Path) -> None:
    """The SDK's own client spawns ``fluxdrive mcp``; its read timeout (20 s) fails the test if nothing answers."""
    import asyncio

    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.shared.exceptions import MCPError

    case = "MCP tools/call whose arguments nest 200 deep"
    TALLY[case] = False  # until every check below has passed
    nested: list[object] = []
    for _ in range(200):
        nested = [nested]
    answers: list[str] = []
    log = tmp_path / "mcp-stderr.log"

    async def session() -> None:
        params = StdioServerParameters(command=str(EXE), args=["mcp"], cwd=str(project))
        with log.open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=20) as client:
                try:
                    result = await client.call_tool("remember", {"title": "T", "content": "x", "refs": nested})
                    answers.append(f"tool result: {result.content}")
                except MCPError as exc:
                    answers.append(str(exc))
                after = await client.call_tool("verdicts", {"output_dir": "nowhere"})  # still serving
                answers.append("".join(getattr(part, "text", "") for part in after.content))

    asyncio.run(session())
    assert "timed out" not in answers[0], answers[0]
    assert answers[0] == "invalid request: it nests deeper than the 200 levels an MCP message may have", answers
    assert "no output directory at 'nowhere'" in answers[1], answers
    assert "Traceback" not in log.read_text()
    TALLY[case] = True


# --------------------------------------------------------------------------
# a Redis server killed mid-run: every line shared still ends up in peer-findings.jsonl


def test_a_redis_killed_mid_run_loses_no_line_of_the_channel(tmp_path: Path) -> None:
    """Three ``fluxdrive findings write`` processes share through a real redis-server, killed (-9, by pid) after
    the first; the run's mirror must hold all three lines."""
    from fluxdrive.exchange import channel
    from fluxdrive.exchange import stream as channel_stream
    from tests.servers import REDIS_SERVER, redis_server

    if not Path(REDIS_SERVER).exists():
        pytest.skip("redis-server is not installed")
    case = "Redis killed mid-run (peer-findings.jsonl keeps every line)"
    TALLY[case] = False  # until every check below has passed
    run = tmp_path / "run"
    run.mkdir()
    path = run / "peer-findings.jsonl"

    def write(n: int) -> CliResult:
        args = ("findings", "write", path, "blocking", f"fd-w{n}", "auth-bypass", f"finding {n} of 3", f"a.py:{n}")
        return run_fluxdrive(*args, cwd=tmp_path)

    with redis_server(tmp_path) as server:
        channel_stream.bind(run, server.url)
        first = write(1)
        assert first.code == 0, first.err
        server.process.kill()  # by its pid: SIGKILL, no goodbye
        server.process.wait(timeout=30)
        later = [write(2), write(3)]
    assert [done.code for done in later] == [0, 0], [done.err for done in later]
    assert all("unreachable" in done.err and not _noise(done) for done in later)
    notes = channel_stream.mirror(run)
    assert any("could not be read at the end of the run" in note for note in notes), notes
    summaries = [finding.summary for finding in channel.read(path).findings]
    assert summaries == ["finding 1 of 3", "finding 2 of 3", "finding 3 of 3"], summaries
    TALLY[case] = True
