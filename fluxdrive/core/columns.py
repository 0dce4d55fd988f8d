"""Plain aligned text tables: deterministic, pipe-friendly, snapshot-testable.

Used for every tabular listing fluxdrive prints (verdicts, agents, config,
timelines) so output does not depend on the terminal.
"""

from __future__ import annotations

from collections.abc import Sequence


def format_columns(headers: Sequence[str], rows: Sequence[Sequence[str]], *, max_last: int | None = None) -> str:
    """Left-aligned columns separated by two spaces; the last column unpadded.

    ``max_last`` shortens the last column with an ellipsis, so one long
    summary cannot flood a caller's context.
    """
    table = [list(headers)] + [[str(cell) for cell in row] for row in rows]
    if max_last is not None:
        for row in table[1:]:
            if len(row[-1]) > max_last:
                row[-1] = row[-1][: max_last - 1].rstrip() + "\u2026"
    widths = [max(len(row[i]) for row in table) for i in range(len(headers) - 1)]
    lines = []
    for row in table:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        lines.append("  ".join([*cells, row[-1]]).rstrip())
    return "\n".join(lines) + "\n"
