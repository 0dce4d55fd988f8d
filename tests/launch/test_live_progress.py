"""The live table in a real pseudo-terminal: what a library prints on stderr lands above it, whole."""

from __future__ import annotations

import sys

import pexpect

SCRIPT = r"""
import sys, time
from fluxdrive.launch.progress import LiveProgress
live = LiveProgress(sys.stderr)
live.stage(1, ["fd-safety", "fd-quality"])
live.started("fd-safety")
time.sleep(0.6)
sys.stderr.write("BANNER from a library: ascii art here\n")
sys.stderr.flush()
time.sleep(0.6)
live.finished("fd-safety", "completed", 1.2, "2 P0")
live.close()
"""


def test_stderr_written_during_the_live_table_stays_on_screen_above_it() -> None:
    """Read the screen a terminal would show (pyte), not the raw stream: without the redirect the table's
    redraw overwrites the banner."""
    import pyte

    child = pexpect.spawn(sys.executable, ["-c", SCRIPT], encoding="utf-8", timeout=60, dimensions=(40, 120))
    child.expect(pexpect.EOF)
    screen = pyte.Screen(120, 40)
    pyte.Stream(screen).feed(child.before)
    shown = [line.rstrip() for line in screen.display if line.strip()]
    assert "BANNER from a library: ascii art here" in shown, shown
    banner = shown.index("BANNER from a library: ascii art here")
    assert shown[banner + 1] == "[1/2 agents complete]", shown  # the table, once, below the banner
    assert sum(1 for line in shown if "agents complete]" in line) == 1
    assert any("fd-safety" in line and "2 P0" in line for line in shown)
