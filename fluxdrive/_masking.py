"""Mask credential-shaped text before it leaves fluxdrive: reports, the channel, prompts, tool results.

Every output that can carry a line of the reviewed code goes through
:func:`mask_text`: well-known credential shapes (AWS keys, GitHub and Slack
tokens, OpenAI-style ``sk-`` keys, JWTs, private-key headers) and literal
values assigned to secret-looking names are replaced with ``****``. It is a
leaf module so the LLM runtime's tools can mask file contents without
loading the static analyzers.
"""

from __future__ import annotations

import re

MASK = "****"

_CREDENTIAL_SHAPES = re.compile(
    r"AKIA[0-9A-Z]{16}"
    r"|gh[pousr]_[A-Za-z0-9]{20,}"
    r"|github_pat_[A-Za-z0-9_]{20,}"
    r"|xox[abpr]-[A-Za-z0-9-]{10,}"
    r"|sk_(?:live|test)_[A-Za-z0-9]{10,}"
    r"|sk-[A-Za-z0-9_-]{20,}"
    r"|AIza[0-9A-Za-z_-]{30,}"
    r"|eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{5,}"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----"
)
_ASSIGNED_SECRET = re.compile(
    r"(?i)((?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|auth)"
    r"[\w-]*[\"']?\s*[:=]\s*)([\"'])([^\"'\s${}%?]{3,})\2"
)


def mask_text(text: str, *, aggressive: bool = False) -> str:
    """Mask credential-shaped tokens; with ``aggressive``, every assigned secret literal."""
    text = _CREDENTIAL_SHAPES.sub(MASK, text)
    text = _ASSIGNED_SECRET.sub(lambda m: f"{m.group(1)}{m.group(2)}{MASK}{m.group(2)}", text)
    if aggressive:
        text = re.sub(r"([\"'])[^\"']{6,}\1", lambda m: f"{m.group(1)}{MASK}{m.group(1)}", text)
    return text
