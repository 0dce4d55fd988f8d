"""Small real projects and git repositories for triage tests."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest


def git(root: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=root, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return proc.stdout


@pytest.fixture
def make_project(tmp_path: Path) -> Callable[..., Path]:
    """``make_project({"path": "text", ...}, git=True)`` -> the project root."""

    def build(files: dict[str, str | bytes], *, repository: bool = False, name: str = "project") -> Path:
        root = tmp_path / name
        for relative, content in files.items():
            path = root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content if isinstance(content, bytes) else content.encode())
        root.mkdir(exist_ok=True)
        if repository:
            git(root, "init", "-q", "-b", "main")
            git(root, "add", "-A")
            git(root, "commit", "-q", "-m", "initial")
        return root

    return build
