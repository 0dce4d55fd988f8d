"""``--cluster auto`` with a stale Ray address file (issue 26 item 17): one line and exit 2 in seconds, not minutes.

Ray's temp directory is pointed at tmp_path (``RAY_TMPDIR``, which Ray honours
for ``auto``), so the machine's real ``/tmp/ray`` is never touched. The stale
file names a loopback port that a listener held and closed, and a second
listener records whether anything connects to the port it names otherwise.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

FLUXDRIVE = Path(sys.executable).parent / "fluxdrive"


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def stale_address_review(tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], int, Path]:
    """``fluxdrive review . --cluster auto`` in a fresh project, with a Ray address file (under
    ``RAY_TMPDIR=tmp_path``) that names a closed loopback port and no token: (the run, the port, the project)."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text("x = 1\n")
    port = _closed_port()
    (tmp_path / "ray").mkdir()
    (tmp_path / "ray" / "ray_current_cluster").write_text(f"127.0.0.1:{port}\n")
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "RAY_AUTH_TOKEN", "RAY_AUTH_MODE")}
    env["RAY_TMPDIR"] = str(tmp_path)
    done = subprocess.run(
        [str(FLUXDRIVE), "review", ".", "--yes", "--cluster", "auto"],
        cwd=project, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    return done, port, project


def test_a_stale_ray_address_file_is_one_line_and_exit_2_within_a_minute(tmp_path: Path) -> None:
    done, port, project = stale_address_review(tmp_path)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr[-2000:]
    assert len(lines) == 1, done.stderr[-2000:]
    assert f"cannot connect to the Ray cluster at auto (127.0.0.1:{port})" in lines[0]
    assert not (project / "docs").exists()  # refused before anything was written
