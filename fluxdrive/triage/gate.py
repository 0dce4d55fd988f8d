"""The approval gate (PROTOCOL.md 2.5): a person approves, edits or rejects the triage.

Commands, typed at the prompt (names may omit the ``fd-`` prefix):

    approve | a            launch with this plan
    reject | r             stop; nothing is dispatched
    promote NAME           move an agent into Stage 1
    demote NAME            keep an agent out of Stage 1
    remove NAME            drop an agent from the run
    add NAME SCORE         add an agent with a score you choose
    help | ?               this list

After every edit the selection and stages are recomputed and the table is
shown again. Non-interactive use needs ``--yes``; without a terminal and
without it the CLI stops with a clear message rather than guessing.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass

from fluxdrive.errors import FluxdriveError
from fluxdrive.triage.engine import Triage, render_table

HELP = (
    "Commands: approve (a), reject (r), promote NAME, demote NAME, remove NAME, add NAME SCORE, help (?). "
    "Names may omit the fd- prefix."
)
PROMPT = "approve / reject / promote NAME / demote NAME / remove NAME / add NAME SCORE / help > "


class Decision(enum.Enum):
    """How the gate ended."""

    APPROVED = "approved"
    REJECTED = "rejected"


@dataclass(frozen=True, slots=True)
class Reply:
    """The gate's answer to one command."""

    message: str
    decision: Decision | None = None
    triage: Triage | None = None  # the edited plan, when the command changed it

    @property
    def changed(self) -> bool:
        """True when the command edited the plan."""
        return self.triage is not None


def _name(result: Triage, raw: str) -> str:
    return result.roster.get(
        raw if raw in result.roster.agents else f"fd-{raw}" if f"fd-{raw}" in result.roster.agents else raw
    ).name


def _stage1(result: Triage) -> set[str]:
    return {a.name for a in result.agents if a.stage == 1}


def _moved(before: set[str], after: set[str], name: str) -> str:
    """What else an edit moved: a promotion can push another agent out of Stage 1 (the slots are limited)."""
    out = sorted(before - after - {name})
    came = sorted(after - before - {name})
    parts = []
    if out:
        parts.append(f"{', '.join(out)} moved out of Stage 1 to make room")
    if came:
        parts.append(f"{', '.join(came)} moved into Stage 1")
    return f"; {'; '.join(parts)}" if parts else ""


def aligned(table: str, width: int | None = None) -> str:
    """The triage table for a terminal: the markdown table's cells in aligned columns, the last cut to ``width``."""
    rows = [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in table.splitlines()
        if line.lstrip().startswith("|") and not set(line.strip()) <= set("|-: ")
    ]
    if not rows:
        return table
    count = max(len(r) for r in rows)
    rows = [r + [""] * (count - len(r)) for r in rows]
    widths = [max(len(r[i]) for r in rows) for i in range(count - 1)]
    out: list[str] = []
    body = iter(rows)
    for line in table.splitlines():
        if not line.lstrip().startswith("|"):
            out.append(line)
            continue
        if set(line.strip()) <= set("|-: "):
            continue
        row = next(body)
        text = "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False)) + "  " + row[-1]
        if width is not None and len(text) > width:
            text = text[: max(width - 1, 20)] + "…"
        out.append(text.rstrip())
    return "\n".join(out)


def apply_command(result: Triage, line: str) -> Reply:
    """Apply one gate command to the triage (recomputing it after edits)."""
    words = line.strip().split()
    if not words:
        return Reply(HELP)
    verb, args = words[0].lower(), words[1:]
    if verb in ("a", "approve", "yes", "y"):
        return Reply("approved", Decision.APPROVED)
    if verb in ("r", "reject", "no", "n", "quit", "q"):
        return Reply("rejected: nothing will be dispatched", Decision.REJECTED)
    if verb in ("?", "h", "help"):
        return Reply(HELP)
    overrides = result.overrides
    try:
        if verb in ("promote", "demote", "remove") and len(args) == 1:
            name = _name(result, args[0])
            if verb == "promote":
                unmatched = not any(a.name == name and a.base_score >= 1 for a in result.agents)
                overrides = overrides.promote(name, add=unmatched)
            elif verb == "demote":
                overrides = overrides.demote(name)
            else:
                overrides = overrides.remove(name)
            after = result.with_overrides(overrides)
            done = f"{verb}d {name}" if verb != "demote" else f"demoted {name}"
            return Reply(done + _moved(_stage1(result), _stage1(after), name), triage=after)
        if verb == "add" and len(args) == 2:
            name = _name(result, args[0])
            score = float(args[1])
            if not 0 < score <= result.config.scoring.max_score:
                return Reply(f"score must be between 0 and {result.config.scoring.max_score:g}")
            after = result.with_overrides(overrides.add(name, score))
            return Reply(f"added {name} with score {score:g}", triage=after)
    except FluxdriveError as exc:
        return Reply(exc.one_line())
    except ValueError:
        return Reply("the score must be a number, e.g. add fd-performance 4")
    return Reply(f"unknown command {line.strip()!r}. {HELP}")


def run_gate(
    result: Triage, read: Callable[[str], str], write: Callable[[str], None], width: int | None = None
) -> tuple[Decision, Triage]:
    """Show the table (aligned for a terminal, not markdown), take commands until approve or reject; the
    decision and the plan as the person left it."""
    write(aligned(render_table(result), width))
    while True:
        try:
            line = read(PROMPT)
        except EOFError:
            write("no answer (end of input): rejected, nothing will be dispatched")
            return Decision.REJECTED, result
        reply = apply_command(result, line)
        write(reply.message)
        if reply.decision is not None:
            return reply.decision, result
        if reply.triage is not None:
            result = reply.triage
            write(aligned(render_table(result), width))
