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
    changed: bool = False


def _name(result: Triage, raw: str) -> str:
    return result.roster.get(
        raw if raw in result.roster.agents else f"fd-{raw}" if f"fd-{raw}" in result.roster.agents else raw
    ).name


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
                overrides.promoted.add(name)
                overrides.demoted.discard(name)
                overrides.removed.discard(name)
                if not any(a.name == name and a.base_score >= 1 for a in result.agents):
                    overrides.added.setdefault(name, 1.0)
            elif verb == "demote":
                overrides.demoted.add(name)
                overrides.promoted.discard(name)
            else:
                overrides.removed.add(name)
                overrides.promoted.discard(name)
            result.recompute()
            return Reply(f"{verb}d {name}" if verb != "demote" else f"demoted {name}", changed=True)
        if verb == "add" and len(args) == 2:
            name = _name(result, args[0])
            score = float(args[1])
            if not 0 < score <= result.config.scoring.max_score:
                return Reply(f"score must be between 0 and {result.config.scoring.max_score:g}")
            overrides.added[name] = score
            overrides.removed.discard(name)
            result.recompute()
            return Reply(f"added {name} with score {score:g}", changed=True)
    except FluxdriveError as exc:
        return Reply(exc.one_line())
    except ValueError:
        return Reply("the score must be a number, e.g. add fd-performance 4")
    return Reply(f"unknown command {line.strip()!r}. {HELP}")


def run_gate(result: Triage, read: Callable[[str], str], write: Callable[[str], None]) -> Decision:
    """Show the table, take commands until approve or reject."""
    write(render_table(result))
    while True:
        try:
            line = read(PROMPT)
        except EOFError:
            write("no answer (end of input): rejected, nothing will be dispatched")
            return Decision.REJECTED
        reply = apply_command(result, line)
        write(reply.message)
        if reply.decision is not None:
            return reply.decision
        if reply.changed:
            write(render_table(result))
