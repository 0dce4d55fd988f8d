"""Kill -9 a real review at random points and check what it leaves behind.

fluxdrive promises that a run killed at any instant leaves no torn report (a
reader sees a whole file or none: temp-and-rename, the ``.md.partial`` +
sentinel protocol), never touches the user's files, leaves no lock that keeps
the next run out (the lock is an ``flock``, released by the kernel however its
holder dies), and that the next run on the same output directory cleans up
after it. This bench checks exactly that, against the real CLI:

* the tree is fluxdrive's own sources plus the installed ``rich`` (about 65,000
  lines of real Python, enough for the static runtime to analyze in worker
  processes), committed into a temporary git repository, with two uncommitted
  user files planted next to the output directory (``docs/plan.md``,
  ``notes.txt``), whose SHA-256 is recorded;
* one un-killed run measures how long a review takes; then each of ``--runs``
  reviews (``fluxdrive review . --yes --expand all -q`` into
  ``docs/research/flux-drive/faults``, the default location) is started in its
  own session and SIGKILLed - the fluxdrive process only, never its group: the
  point is to see whether its workers die with it - after a delay drawn
  uniformly in [0.05, 0.9] x that duration (seeded; one draw in each of
  ``--runs`` equal slices of that range, in shuffled order, so that the kill
  points cover the whole review and not only the long Stage 1);
* after each kill: (a) orphans - processes still alive 5 s later that belong to
  the run (its process group, the bench's marker in their environment, its
  output or scratch directory on their command line, or a multiprocessing
  child re-parented to init working in the scratch directory); they are listed
  with their command lines, then killed by pid (only those proven ours by
  process group or marker) so the next run starts clean; (b) torn files -
  every file in the output directory other than ``*.partial``, the lock file
  and dot-prefixed temporaries must be whole: JSON parses, an agent report
  ends with the completion sentinel, ``peer-findings.jsonl`` may lose only a
  torn last line; (c) lost files - the planted files keep their hash and
  ``git status`` of the tree is unchanged (the output directory aside) and
  no ``.git/index.lock`` is left;
  (d) stale locks - the flock a rerun would take is probed with the same
  non-blocking call before the bench cleans up, and the next review is started
  on the same output directory at once: refused with "in use by another
  fluxdrive run" counts as a stale lock;
* a final un-killed review on the same output directory must end in a verdict
  (exit 0 or 1) and leave no ``.fluxdrive.lock``, no ``*.tmp``, no
  ``*.md.partial``, no torn file and no process behind.

Safety: everything lives in a TemporaryDirectory; the bench only signals pids
it started, or processes it identified as theirs by process group or by the
random marker it put in their environment; never by name.

Run: ``.venv/bin/python bench/faults.py [--runs 24] [--seed 20240611]``.
Exit 1 when a file was torn or lost, a process or a lock outlived its run, or
the final run failed.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import fcntl
import hashlib
import importlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from fluxdrive.contracts.completion import PARTIAL_SUFFIX, SENTINEL
from fluxdrive.workspace import LOCK_FILE

RUNS = 24
SEED = 20240611
ORPHAN_WAIT_S = 5.0
KILL_FRACTION = (0.05, 0.9)  # past 0.9 a run often finishes first: no kill
OUTPUT = Path("docs") / "research" / "flux-drive" / "faults"
MARKER_VAR = "FLUXDRIVE_FAULTS_RUN"
BUSY = "in use by another fluxdrive run"
USER_FILES = {
    "docs/plan.md": "# Plan\n\nUncommitted notes the review must never touch.\n\n- step one\n- step two\n",
    "notes.txt": "scratch notes, not in git\n",
}
NON_AGENT_MD = {"triage-table.md", "summary.md"}


# --------------------------------------------------------------------------
# the tree


def build(root: Path) -> int:
    """fluxdrive's sources and rich's, committed; the lines of Python in the tree."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.so")
    shutil.copytree(Path(__file__).resolve().parent.parent / "fluxdrive", root / "fluxdrive", ignore=ignore)
    shutil.copytree(Path(importlib.import_module("rich").__file__ or "").parent, root / "rich", ignore=ignore)
    (root / "pyproject.toml").write_text('[project]\nname = "bench"\nversion = "0"\n')
    for command in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "bench"]):
        subprocess.run(["git", "-c", "user.email=b@example.com", "-c", "user.name=b", *command], cwd=root, check=True)
    return sum(p.read_text(encoding="utf-8", errors="replace").count("\n") for p in root.rglob("*.py"))


def plant(root: Path) -> dict[str, str]:
    """Write the user's uncommitted files; their SHA-256 by relative path."""
    hashes = {}
    for name, text in USER_FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        hashes[name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return hashes


def tree_status(root: Path) -> list[str]:
    """``git status --porcelain`` of the tree, every untracked file listed, the output directory left out."""
    proc = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"], cwd=root, capture_output=True, text=True, check=True
    )
    prefix = OUTPUT.as_posix() + "/"
    return sorted(line for line in proc.stdout.splitlines() if not line[3:].strip('"').startswith(prefix))


def lost_files(root: Path, hashes: dict[str, str], baseline: list[str]) -> list[str]:
    """What happened to the user's files and the tree: one entry per file lost or changed."""
    lost = []
    for name, digest in hashes.items():
        path = root / name
        if not path.is_file():
            lost.append(f"{name} missing")
        elif hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            lost.append(f"{name} changed")
    if (root / ".git" / "index.lock").exists():
        lost.append(".git/index.lock left behind (the user's next git command would fail)")
    now = tree_status(root)
    lost += [f"git status: +{line!r}" for line in sorted(set(now) - set(baseline))]
    lost += [f"git status: -{line!r}" for line in sorted(set(baseline) - set(now))]
    return lost


# --------------------------------------------------------------------------
# the output directory


def torn_files(out: Path) -> list[tuple[str, int]]:
    """Every file in ``out`` that a reader would find incomplete: (path and reason, its mtime)."""
    torn = []
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        rel = path.relative_to(out).as_posix()
        if path.name.endswith(".partial") or path.name == LOCK_FILE:
            continue  # a .partial is unfinished by contract; the lock's record is advisory and never atomic
        if path.name.startswith(".") and path.name.endswith(".tmp"):
            continue  # an atomic write's temporary: the next run sweeps it
        try:
            data = path.read_bytes()
        except OSError as exc:
            torn.append((f"{rel}: unreadable ({exc.strerror})", 0))
            continue
        reason = _torn_reason(rel, data)
        if reason:
            torn.append((f"{rel}: {reason}", path.stat().st_mtime_ns))
    return torn


def _torn_reason(rel: str, data: bytes) -> str | None:
    name = rel.rsplit("/", 1)[-1]
    if name.endswith((".json", ".sarif")) or name == ".fluxdrive-run":
        try:
            json.loads(data)
        except ValueError:
            return f"not valid JSON ({len(data)} bytes)"
    elif name.endswith(".jsonl"):
        lines = data.split(b"\n")
        for number, line in enumerate(lines[:-1], 1):  # the newline-terminated lines
            try:
                json.loads(line)
            except ValueError:
                return f"line {number} of {len(lines) - 1} complete lines is not JSON"
    elif name.endswith(".md") and "/" not in rel and name not in NON_AGENT_MD:  # an agent's report
        text = data.decode("utf-8", errors="replace")
        if not text.rstrip().endswith(SENTINEL):
            return f"agent report without the completion sentinel ({len(data)} bytes)"
    return None


def _new(path: Path, since_ns: int) -> bool:
    try:
        return path.stat().st_mtime_ns >= since_ns
    except OSError:
        return False


def phase(out: Path, since_ns: int) -> str:
    """How far the run got, from the files it wrote (mtime at or after its start)."""
    if _new(out / "run.json", since_ns):
        return "finished"
    if any(_new(out / n, since_ns) for n in ("findings.json", "summary.md", "verdicts/synthesis.json")):
        return "synthesis"
    try:
        stages = json.loads((out / "triage.json").read_text())["stages"]
    except (OSError, ValueError, KeyError, TypeError):
        stages = {}
    reached = "start-up"
    if any(_new(out / n, since_ns) for n in ("triage.json", "input-profile.json", "triage-table.md")):
        reached = "triage"
    for stage in ("1", "2"):
        agents = stages.get(stage) or []
        if stage == "2" and any(_new(p, since_ns) for p in out.glob("research/*.md")):
            reached = "research"
        if any(_new(out / "prompts" / f"{a}.md", since_ns) for a in agents):
            done = sum(1 for a in agents if _new(out / f"{a}.md", since_ns))
            partial = sum(1 for a in agents if _new(out / f"{a}{PARTIAL_SUFFIX}", since_ns))
            reached = f"stage {stage} ({done}/{len(agents)} reports, {partial} .partial)"
    return reached


def lock_held(out: Path) -> bool:
    """True when the flock a new run takes on the lock file would be refused right now."""
    try:
        fd = os.open(out / LOCK_FILE, os.O_RDWR | os.O_CLOEXEC)
    except OSError:
        return False  # no lock file: nothing to hold
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing releases our flock, if we got it
    return False


# --------------------------------------------------------------------------
# processes


@dataclasses.dataclass(frozen=True)
class Proc:
    """A live process tied to a run, and how the bench knows."""

    pid: int
    ppid: int
    pgid: int
    state: str
    cmdline: str
    why: tuple[str, ...]

    @property
    def ours(self) -> bool:
        """Proven a descendant of a run the bench started: its process group, or the bench's marker."""
        return "group" in self.why or "marker" in self.why


def _stat(pid: int) -> tuple[str, int, int] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return fields[0], int(fields[1]), int(fields[2])


def _marked(pid: int, marker: str) -> bool:
    """True when the process's environment carries this run's marker (set by the bench, inherited by descendants)."""
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False
    return f"{MARKER_VAR}={marker}".encode() in environ.split(b"\0")


def survivors(pgid: int, marker: str, scratch: Path, out: Path) -> list[Proc]:
    """Live (non-zombie) processes tied to the run whose leader was ``pgid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        pid = int(entry.name)
        stat = _stat(pid)
        if stat is None or stat[0] in ("Z", "X"):
            continue
        state, ppid, group = stat
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            cmdline = " ".join(a.decode(errors="replace") for a in argv if a)
        except OSError:
            continue
        try:
            cwd = os.readlink(entry / "cwd")
        except OSError:
            cwd = ""
        why = []
        if group == pgid:
            why.append("group")
        if _marked(pid, marker):
            why.append("marker")
        if str(out) in cmdline or str(scratch) in cmdline:
            why.append("cmdline")
        if "multiprocessing" in cmdline and ppid == 1 and cwd.startswith(str(scratch)):
            why.append("mp-orphan")
        if why:
            found.append(Proc(pid, ppid, group, state, cmdline, tuple(why)))
    return found


def reap(procs: list[Proc], marker: str) -> None:
    """SIGKILL the processes proven ours (group or marker re-checked just before), then wait for them to go."""
    for proc in procs:
        if not proc.ours:
            continue
        stat = _stat(proc.pid)
        if stat is not None and (stat[2] == proc.pgid or _marked(proc.pid, marker)):
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signal.SIGKILL)
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        alive = [p for p in procs if p.ours and (s := _stat(p.pid)) is not None and s[0] not in ("Z", "X")]
        if not alive:
            return
        time.sleep(0.05)


# --------------------------------------------------------------------------
# the loop


@dataclasses.dataclass
class Review:
    """One started review."""

    process: subprocess.Popen[bytes]
    started_ns: int
    marker: str
    stderr: Path

    def refused_busy(self) -> bool:
        """True when the run exited because another run held the output directory."""
        return self.process.poll() is not None and BUSY in self.stderr.read_text(errors="replace")

    def last_error(self) -> str:
        lines = [line for line in self.stderr.read_text(errors="replace").splitlines() if line.strip()]
        return lines[-1][:160] if lines else "no stderr"


def describe(procs: list[Proc]) -> list[str]:
    return [f"    pid {p.pid} ppid {p.ppid} pgid {p.pgid} {p.state} [{','.join(p.why)}]: {p.cmdline}" for p in procs]


@dataclasses.dataclass
class Bench:
    """The tree, the output directory and the running totals."""

    scratch: Path
    token: str = dataclasses.field(default_factory=lambda: uuid.uuid4().hex)
    hashes: dict[str, str] = dataclasses.field(default_factory=dict)
    baseline: list[str] = dataclasses.field(default_factory=list)
    seen: set[str] = dataclasses.field(default_factory=set)  # each torn or lost file is counted once
    current: Review | None = None
    killed: int = 0
    torn_or_lost: int = 0
    orphans: int = 0
    stale: int = 0

    @property
    def root(self) -> Path:
        return self.scratch / "project"

    @property
    def out(self) -> Path:
        return self.root / OUTPUT

    def start(self, label: str) -> Review:
        """Start ``fluxdrive review`` on the tree in its own session; stdout dropped, stderr kept."""
        executable = Path(sys.executable).parent / "fluxdrive"
        command = [str(executable) if executable.exists() else "fluxdrive"]
        command += ["review", ".", "--yes", "--expand", "all", "--output-dir", str(self.out), "-q"]
        marker = f"{self.token}-{label}"
        stderr = self.scratch / "logs" / f"{label}.stderr"
        stderr.parent.mkdir(exist_ok=True)
        started_ns = time.time_ns()
        with stderr.open("wb") as err:
            process = subprocess.Popen(
                command,
                cwd=self.root,
                env={**os.environ, MARKER_VAR: marker, "NO_COLOR": "1"},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                start_new_session=True,  # its own process group, found again by that id after the kill
            )
        self.current = Review(process, started_ns, marker, stderr)
        return self.current

    def survivors(self, review: Review) -> list[Proc]:
        return survivors(review.process.pid, review.marker, self.scratch, self.out)

    def settle(self, review: Review) -> list[Proc]:
        """The run's processes still alive after it exited on its own, given up to ORPHAN_WAIT_S to go."""
        deadline = time.monotonic() + ORPHAN_WAIT_S
        while (left := self.survivors(review)) and time.monotonic() < deadline:
            time.sleep(0.1)
        return left

    def damage(self) -> list[str]:
        """Torn files in the output directory and lost files in the tree, each counted the first time it is seen."""
        found = [(f"torn {text}", f"{text}@{mtime}") for text, mtime in torn_files(self.out)]
        found += [(f"lost {text}", text) for text in lost_files(self.root, self.hashes, self.baseline)]
        new = [text for text, key in found if key not in self.seen]
        self.seen.update(key for _, key in found)
        self.torn_or_lost += len(new)
        return new

    def prepare(self) -> tuple[int, float] | None:
        """Build the tree and time one un-killed review; (lines, seconds), or None when it reached no verdict."""
        self.root.mkdir()
        lines = build(self.root)
        self.hashes = plant(self.root)
        planted = tree_status(self.root)
        print(f"tree: fluxdrive + rich - {lines:,} lines of Python; user files {', '.join(self.hashes)}")
        review = self.start("baseline")
        code = review.process.wait()
        duration = (time.time_ns() - review.started_ns) / 1e9
        left = self.settle(review)
        print(f"un-killed run: {duration:.2f} s, exit {code}, {len(left)} process(es) left")
        reap(left, review.marker)
        if code not in (0, 1):
            print(f"the un-killed run reached no verdict: {review.last_error()}")
            return None
        # What a clean run writes into the project (the .fluxdrive/ domain cache) is fluxdrive's own state:
        # the tree is compared with its state after this run.
        self.baseline = tree_status(self.root)
        changed = sorted(set(self.baseline) ^ set(planted))
        if changed:
            print(f"the un-killed run changed the tree: {', '.join(changed)} (taken as the baseline)")
        return lines, duration

    def kill_one(self, index: int, delay: float, duration: float) -> None:
        """One review, SIGKILLed after ``delay`` seconds; print what it left."""
        review = self.start(f"run-{index}")
        time.sleep(max(0.0, delay - (time.time_ns() - review.started_ns) / 1e9))
        if review.process.poll() is None:
            os.kill(review.process.pid, signal.SIGKILL)  # the fluxdrive process only, not its group
            review.process.wait()
            self.killed += 1
            what = f"killed at {delay:5.2f} s ({delay / duration:.2f} x)"
        elif review.refused_busy():
            self.stale += 1
            print(f"run {index:2}: refused at start, stale lock from the run before - {review.last_error()}")
            return
        else:
            what = f"finished before the kill at {delay:5.2f} s (exit {review.process.returncode})"
        reached = phase(self.out, review.started_ns)
        time.sleep(ORPHAN_WAIT_S)
        left = self.survivors(review)
        held = lock_held(self.out)  # what a rerun now, before anyone cleans up, would meet
        damage = self.damage()
        self.orphans += len(left)
        self.stale += held
        found = [f"{len(left)} orphan(s)" if left else "no orphans", *damage]
        found += [f"{LOCK_FILE} still locked {ORPHAN_WAIT_S:.0f} s after the kill"] if held else []
        print(f"run {index:2}: {what}, reached {reached}: {'; '.join(found)}")
        for line in describe(left):
            print(line)
        reap(left, review.marker)

    def final(self) -> tuple[str, bool]:
        """One un-killed review on the same output directory: a verdict, and nothing left behind."""
        review = self.start("final")
        code = review.process.wait()
        left = self.settle(review)
        out = self.out
        problems = []
        if review.refused_busy():
            self.stale += 1
            problems.append("refused: output directory in use")
        if code not in (0, 1):
            problems.append(f"exit {code}: {review.last_error()}")
        if (out / LOCK_FILE).exists():
            problems.append(f"{LOCK_FILE} left behind")
        problems += [f"{p.relative_to(out)} left behind" for p in sorted(out.rglob("*.tmp"))]
        problems += [f"{p.relative_to(out)} left behind" for p in sorted(out.rglob(f"*{PARTIAL_SUFFIX}"))]
        problems += self.damage()
        if left:
            problems.append(f"{len(left)} process(es) alive {ORPHAN_WAIT_S:.0f} s after it exited")
            print("final run left:")
            for line in describe(left):
                print(line)
            reap(left, review.marker)
        if problems:
            return f"FAILED (exit {code}; " + "; ".join(problems) + ")", False
        return f"ok (exit {code})", True

    def cleanup(self) -> None:
        """Kill the review in flight, if any, and whatever of its group survives."""
        review = self.current
        if review is None:
            return
        if review.process.poll() is None:
            os.kill(review.process.pid, signal.SIGKILL)
            review.process.wait()
        reap(self.survivors(review), review.marker)


def kill_delays(runs: int, seed: int, duration: float) -> list[float]:
    """Uniform in KILL_FRACTION x duration, one draw per equal slice (stratified), in a seeded random order."""
    rng = random.Random(seed)
    low, high = KILL_FRACTION
    width = (high - low) / runs
    delays = [(low + (i + rng.random()) * width) * duration for i in range(runs)]
    rng.shuffle(delays)
    return delays


def main() -> int:
    parser = argparse.ArgumentParser(description="Kill -9 a real review at random points; check what it leaves.")
    parser.add_argument("--runs", type=int, default=RUNS, help=f"reviews to kill (default {RUNS})")
    parser.add_argument("--seed", type=int, default=SEED, help=f"seed of the kill delays (default {SEED})")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fluxdrive-faults-bench-") as tmp:
        bench = Bench(Path(tmp).resolve())
        try:
            prepared = bench.prepare()
            if prepared is None:
                return 1
            _, duration = prepared
            delays = kill_delays(args.runs, args.seed, duration)
            for index, delay in enumerate(delays, 1):
                bench.kill_one(index, delay, duration)
            status, ok = bench.final()
        finally:
            bench.cleanup()
    print(f"runs killed: {bench.killed}")
    print(f"torn or lost files: {bench.torn_or_lost}")
    print(f"orphaned processes after {ORPHAN_WAIT_S:.0f} s: {bench.orphans}")
    print(f"stale locks that blocked the next run: {bench.stale}")
    print(f"final clean run: {status}")
    return 1 if bench.torn_or_lost or bench.orphans or bench.stale or not ok else 0


if __name__ == "__main__":
    sys.exit(main())
