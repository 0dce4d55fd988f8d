"""Suggested fixes: mechanical rewrites attached to findings, published as suggestions, applied by ``fluxdrive fix``.

:mod:`.rewrites` (fluxdrive's own rules' known rewrites), :mod:`.attach` (which finding gets which fix,
from ruff's fix data and the rewrites), :mod:`.apply` (a run's fixes as a unified diff, written back
atomically when asked).
"""

from __future__ import annotations

from fluxdrive.fixes.apply import FixPlan, plan_fixes, write_fixes
from fluxdrive.fixes.attach import attach_suggestions, digest

__all__ = ["FixPlan", "attach_suggestions", "digest", "plan_fixes", "write_fixes"]
