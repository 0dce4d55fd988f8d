"""How commands print: results to stdout, warnings to stderr, JSON stably - all of it scrubbed.

Whatever a command prints may quote a file name, a report or a provider's
error: :func:`fluxdrive._masking.scrub` strips terminal escapes and masks
credentials and configured keys on the way out, here, once for every command.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from fluxdrive._masking import scrub


def out(text: str) -> None:
    """Write ``text`` to stdout, adding a final newline if it lacks one."""
    text = scrub(text)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def warn(text: str) -> None:
    """One ``fluxdrive: warning:`` line on stderr."""
    sys.stderr.write(f"fluxdrive: warning: {' '.join(scrub(text).split())}\n")


def note(text: str) -> None:
    """One ``fluxdrive:`` informational line on stderr (keeps stdout clean)."""
    sys.stderr.write(f"fluxdrive: {' '.join(scrub(text).split())}\n")


def out_json(data: Any) -> None:
    """Print ``data`` as indented JSON."""
    out(json.dumps(data, indent=2, ensure_ascii=False))
