"""The known rewrites of fluxdrive's own rules: a line that a rule flags, and the line that fixes it.

Why a table here and not in the checks: a check decides that a line is a defect from its syntax tree;
the rewrite is a text edit of one line that a reviewer can accept as it is (a GitHub suggestion), so it
must be mechanical and local. Only rewrites that are always the same edit are listed:
``yaml.load(x)`` -> ``yaml.safe_load(x)`` (not when the call names a ``Loader``: that is a choice to
review, not to rewrite), and ``verify=False`` removed from an HTTP call (the default verifies).
``shell=True`` is not here: dropping it changes how the command string is parsed, so the fix is
never mechanical.

Both are ``unsafe`` in ruff's sense (the program behaves differently afterwards: custom YAML tags stop
loading, a private CA stops being accepted), so ``fluxdrive fix --apply`` applies them only with
``--unsafe``; as suggestions they are offered to the reviewer either way.
"""

from __future__ import annotations

import re
from collections.abc import Callable

Rewrite = Callable[[str], str | None]

_YAML_LOAD = re.compile(r"\byaml\.load\(")
_VERIFY_AFTER = re.compile(r",\s*verify\s*=\s*False\b(?=\s*[,)])")
_VERIFY_BEFORE = re.compile(r"(?<=\()\s*verify\s*=\s*False\s*(?:,\s*|(?=\)))")


def _safe_load(line: str) -> str | None:
    if len(_YAML_LOAD.findall(line)) != 1 or "Loader" in line:
        return None
    return _YAML_LOAD.sub("yaml.safe_load(", line)


def _no_verify_false(line: str) -> str | None:
    for pattern in (_VERIFY_AFTER, _VERIFY_BEFORE):
        if len(pattern.findall(line)) == 1:
            return pattern.sub("", line)
    return None


REWRITES: dict[str, tuple[Rewrite, str]] = {
    "fluxdrive:py-unsafe-deserialization": (_safe_load, "unsafe"),
    "fluxdrive:py-tls-verify-disabled": (_no_verify_false, "unsafe"),
}
"""Rule id -> (the line rewritten, or None where the rewrite does not fit; ruff's applicability)."""


def rewrite(rule: str, line: str) -> tuple[str, str] | None:
    """(the fixed line, applicability) for ``line`` flagged by ``rule``, or None."""
    known = REWRITES.get(rule)
    if known is None:
        return None
    fixed = known[0](line)
    return (fixed, known[1]) if fixed is not None and fixed != line else None
