"""The labelled corpus of bench/judgment.py: load a case, build its git repository, run its command.

A case is a directory ``bench/judgment/cases/NN-slug/`` with ``case.yaml``
(see bench/judgment/README.md), ``base/`` (committed on ``main``) and
``branch/`` (files added or changed on the feature branch, committed there).
``tree_from: OTHER`` starts from another case's tree; ``copy:`` entries bring
shared upstream files (``bench/judgment/upstream/``) into the base or the
branch.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

CORPUS = Path(__file__).resolve().parent / "judgment"
CASES = CORPUS / "cases"
GIT_DATE = "2026-08-01T12:00:00+00:00"
RUN_TIMEOUT_S = 900


@dataclass(frozen=True)
class Case:
    """One case of the corpus, as written in its case.yaml."""

    name: str
    path: Path
    spec: dict[str, Any]

    @property
    def kind(self) -> str:
        return str(self.spec.get("kind", "?"))

    @property
    def command(self) -> str:
        return str(self.spec["command"])

    @property
    def ground_truth(self) -> list[dict[str, Any]]:
        return list(self.spec.get("ground_truth") or [])

    @property
    def expect(self) -> dict[str, Any]:
        return dict(self.spec.get("expect") or {})


@dataclass
class Run:
    """One execution of a case's command through the real CLI."""

    argv: list[list[str]]
    exit_code: int
    seconds: float
    stdout: str
    stderr: str
    findings: dict[str, Any] | None
    manifest: dict[str, Any] | None
    notes: list[str] = field(default_factory=list)


def load_cases(pattern: str = "*") -> list[Case]:
    cases = []
    for path in sorted(CASES.glob(pattern)):
        spec_file = path / "case.yaml"
        if path.is_dir() and spec_file.is_file():
            spec = yaml.safe_load(spec_file.read_text(encoding="utf-8"))
            cases.append(Case(name=path.name, path=path, spec=spec))
    return cases


def _overlay(source: Path, target: Path) -> None:
    if source.is_dir():
        shutil.copytree(source, target, dirs_exist_ok=True)
    elif source.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)


def _layer(case: Case, layer: str, repo: Path) -> None:
    """Write the case's ``layer`` ("base" or "branch") into repo, tree_from first."""
    parent = case.spec.get("tree_from")
    if parent:
        _layer(Case(parent, CASES / parent, yaml.safe_load((CASES / parent / "case.yaml").read_text())), layer, repo)
    for entry in case.spec.get("copy") or []:
        if entry.get("into", "base") == layer:
            _overlay(CORPUS / entry["from"], repo / entry["to"])
    _overlay(case.path / layer, repo / ".")


def git_env(home: Path) -> dict[str, str]:
    """The environment of a run: a fresh user (config, data, git identity), no FLUXDRIVE_* overrides."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLUXDRIVE_")}
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
        (home / name.lower()).mkdir(parents=True, exist_ok=True)
        env[name] = str(home / name.lower())
    gitconfig = home / "gitconfig"
    gitconfig.write_text("[user]\n\tname = Bench Author\n\temail = bench@example.com\n[commit]\n\tgpgsign = false\n")
    env.update(
        GIT_CONFIG_GLOBAL=str(gitconfig),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_DATE=GIT_DATE,
        GIT_COMMITTER_DATE=GIT_DATE,
    )
    return env


def materialize(case: Case, repo: Path, env: dict[str, str]) -> None:
    """A real git repository: base committed on main, the branch checked out with its overlay committed."""
    repo.mkdir(parents=True)

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    _layer(case, "base", repo)
    git("add", "-A")
    git("commit", "-q", "--allow-empty", "-m", "base")
    branch = case.spec.get("branch")
    if branch:
        git("checkout", "-q", "-b", str(branch))
        _layer(case, "branch", repo)
        git("add", "-A")
        staged = subprocess.run(["git", "diff", "--cached", "--quiet"], cwd=repo, env=env, check=False)
        if staged.returncode:
            git("commit", "-q", "-m", f"{branch}: the change under review")


def pipeline(command: str, cli: list[str], extra: list[str]) -> list[list[str]]:
    """The user's command as argv lists (split at |), with ``fluxdrive`` replaced by ``cli`` plus ``extra``."""
    stages: list[list[str]] = [[]]
    for token in shlex.split(command):
        if token == "|":
            stages.append([])
        else:
            stages[-1].append(token)
    argv = []
    for stage in stages:
        if stage and stage[0] == "fluxdrive":
            argv.append([*cli, *stage[1:], *extra])
        else:
            argv.append(stage)
    if not any(stage[: len(cli)] == cli for stage in argv):
        raise ValueError(f"command does not run fluxdrive: {command!r}")
    return argv


def _read_json(path: Path) -> dict[str, Any] | None:
    import json

    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return loaded if isinstance(loaded, dict) else None


def execute(argv: list[list[str]], cwd: Path, env: dict[str, str], out: Path) -> Run:
    """Run the pipeline (each stage's stdout into the next), timing it; read findings.json and run.json."""
    started = time.monotonic()
    procs: list[subprocess.Popen[bytes]] = []
    upstream = None
    for position, stage in enumerate(argv):
        last = position == len(argv) - 1
        proc = subprocess.Popen(
            stage,
            cwd=cwd,
            env=env,
            stdin=upstream if upstream is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE if last else subprocess.DEVNULL,
        )
        if upstream is not None:
            upstream.close()
        upstream = proc.stdout
        procs.append(proc)
    notes = []
    try:
        stdout, stderr = procs[-1].communicate(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        procs[-1].kill()
        stdout, stderr = procs[-1].communicate()
        notes.append(f"timed out after {RUN_TIMEOUT_S} s")
    for proc in procs[:-1]:
        proc.wait()
    return Run(
        argv=argv,
        exit_code=procs[-1].returncode,
        seconds=time.monotonic() - started,
        stdout=stdout.decode("utf-8", "replace"),
        stderr=stderr.decode("utf-8", "replace"),
        findings=_read_json(out / "findings.json"),
        manifest=_read_json(out / "run.json"),
        notes=notes,
    )
