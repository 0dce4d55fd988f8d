"""Document checks for people (fd-people, offline).

Plans fail as often for want of a person as for want of a design: nobody
owns the plan, nobody owns the follow-ups, or the plan hands a team new
on-call or support work and never says who carries it. Judged only in
plans, proposals, ADRs, PRDs and meeting notes, never in a README.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from fluxdrive.runtimes.static.checks import _prose
from fluxdrive.runtimes.static.checks.engine.document import DocModule
from fluxdrive.runtimes.static.checks.engine.registry import CheckHit, document_check

_OWNER_WORDS = re.compile(
    r"\b(owners?|owned by|dri|directly responsible|approvers?|approved by|accountable|responsible|deciders?|"
    r"decision[- ]makers?|authors?|written by|sponsors?|point of contact|assignees?|assigned to|led by|lead by|"
    r"raci|tech lead|project lead|team lead)\b",
    re.I,
)
_OWNER_NAMES = re.compile(
    r"(?<![\w.])@[A-Za-z][\w-]+"
    r"|\b[A-Z][a-z]+(?: [A-Z][a-z]+)? (?:owns|leads|will (?:own|lead|drive|run|coordinate|manage|be responsible))\b"
    r"|\b[A-Z][\w&-]* team (?:owns|leads|will (?:own|lead|drive|run)|is responsible)\b"
)


def _names_owner(text: str) -> bool:
    return bool(_OWNER_WORDS.search(text) or _OWNER_NAMES.search(text))


_OWNER_KEYS = ("author", "authors", "owner", "owners", "deciders", "dri", "approver", "approvers", "lead")
_ACTIONS_HEADING = re.compile(
    r"^(action items?|actions|action points|next steps|follow[- ]?ups?|follow[- ]up actions|to-?dos?|to do|"
    r"open actions|actions and owners)$"
)
_ITEM_OWNED = re.compile(
    r"(?<![\w.])@[\w-]+|\b(owner|owners|assignee|assigned|dri)\b"
    r"|\(\s*[A-Z][a-z]+(?:\s[A-Z][a-z]*\.?)?(?:\s*(?:,|and|&)\s*[A-Z][a-z]+)*\s*\)"
    r"|\[\s*[A-Z][a-z]+(?:\s[A-Z][a-z]*)?\s*\]"
    r"|^\*{0,2}[A-Z][a-z]+(?: [A-Z][a-z]+)?\*{0,2}\s*(?::|—|–| - |\bto\b|\bwill\b|\bowns\b|\band [A-Z][a-z]+ to\b)"
    r"|(?:—|–| - |: )\s*\*{0,2}[A-Z][a-z]+(?: [A-Z][a-z]*\.?)?\*{0,2}\s*[.)]?\s*$"
    r"|\b[A-Z][\w&-]* team\b|\bteam [A-Z]\w*|\b(?:I'll|I will|me)\b"
)
_READER_STEP = re.compile(r"^(read|see|learn|check out|try|visit|browse|watch)\b", re.I)
_LOAD = re.compile(
    r"\b((?:watch|check|monitor|review|triag)\w*\s+(?:[\w-]+\s+){0,4}?(?:hourly|every (?:hour|night|weekend|\d+ minutes)|"
    r"24/7|around the clock|overnight|(?:on|including) weekends)|(?:done|run|conducted|covered|carried|handled) by (?:our |the )?(?:only )?(?:one|two|three|four|\d) "
    r"(?:staff |senior |principal )?(?:engineers|people|interviewers|managers|leads|members)|on-?call|on call rotation|pager(?:duty)?|paging|support (?:duty|rotation|shifts?|queue|desk)|"
    r"(?:24/7|out[- ]of[- ]hours) support|re-?org\w*|reorgani[sz]\w*|restructur\w*|team moves?|"
    r"mov(?:e|es|ing) (?:to|into|under) the [\w -]{1,30}? team|join(?:s|ing)? the [\w -]{1,30}? team|"
    r"(?:will|would|to) (?:also )?(?:take on|take over|absorb|inherit|pick up)|take over (?:ownership|support|on-?call|"
    r"maintenance)|the team will also)\b",
    re.I,
)
_STAFFING = re.compile(
    r"\b(staff\w*|headcount|hir(?:e|es|ed|ing)|handoff|hand-off|handover|hand over|transition (?:plan|period)|"
    r"rotation (?:size|of \d+)|\d+ (?:people|engineers|members|persons) (?:in|on) (?:the )?rotation|"
    r"(?:people|engineers) per rotation|training|onboard\w*|shadow\w*|runbooks?|playbooks?|capacity|workload|"
    r"burn-?out|compensat\w*|time off in lieu|toil|follow[- ]the[- ]sun|secondary on-?call|ramp-?up|"
    r"knowledge transfer|backfill(?:ing)? (?:the )?(?:role|position))\b",
    re.I,
)


# Sections whose whole subject is how the people side is handled.
_STAFFING_SECTION = re.compile(
    r"\b(transition|staffing|handover|handoff|hand-off|training|capacity|people plan|rotation)\b"
)


@document_check(
    "doc-no-owner",
    tag="people",
    severity="P2",
    summary="a plan, proposal, RFC or reorg that names no owner, DRI, approver or decision-maker",
    match=[
        "# Migration plan: billing database\n\n## Goal\n\nMove billing to Postgres 16.\n\n## Steps\n\n"
        "1. Provision the new cluster.\n2. Replicate.\n3. Cut over during the Sunday window.\n",
        "# Proposal: merge the search and discovery teams\n\n## Why\n\nBoth teams maintain the ranking service.\n\n"
        "## What changes\n\nOne backlog, one stand-up, one on-call rotation.\n",
        "# Roadmap notes\n\nOwner of these notes: @ana.\n\n| Item | Quarter | Owner |\n| --- | --- | --- |\n"
        "| SSO | Q1 | |\n| Export | Q2 | Sam |\n",
    ],
    no_match=[
        "# Migration plan: billing database\n\nOwner: @priya. Approver: Head of Platform.\n\n## Steps\n\n"
        "1. Provision the new cluster.\n2. Cut over.\n",
        "# Proposal: merge the search and discovery teams\n\n## What changes\n\nOne backlog. Dana leads the merged "
        "team and will run the first planning.\n",
        "# Setup guide\n\n## Install\n\nRun the installer.\n\n## Configure\n\nEdit the file.\n",
        "# Roadmap notes\n\nOwner of these notes: @ana.\n\n| Item | Owner |\n| --- | --- |\n| SSO | Mei |\n| Export | Sam |\n",
    ],
)
def no_owner(doc: DocModule) -> Iterator[CheckHit]:
    kind = _prose.kind(doc)
    if kind is not None:
        yield from _empty_owner_cells(doc)
    if kind not in ("plan", "prd"):
        return  # an ADR records a decision; its deciders are optional in every ADR template
    if len(doc.headings) < 3 and sum(1 for _n, t in _prose.prose_lines(doc) if t.strip()) < 8:
        return  # too short to be a plan anyone is asked to approve
    meta = _prose.front_matter(doc)
    if any(meta.get(key) for key in _OWNER_KEYS):
        return
    if kind == "adr" and re.search(r"\b(accepted|approved|superseded|rejected|deprecated)\b", str(meta), re.I):
        return
    texts = [doc.lines[n - 1] for n, _t in _prose.prose_lines(doc)] + [h.text for h in doc.headings]
    if any(_names_owner(text) for text in texts):
        return
    if kind == "adr" and _closed(doc):
        return  # a record of a decision already taken: its owner is history
    yield CheckHit(
        line=_prose.title_line(doc),
        title=f'"{_prose.quote(_prose.title(doc), 60)}" names no owner, DRI or approver',
        why="A plan nobody owns has nobody to answer its open questions, chase its steps or call it off; "
        "reviewers also cannot tell who is asking them for approval.",
        fix="Name the owner (DRI) and who approves it near the top: 'Owner: @name, Approver: @name'.",
    )


_OWNER_COLUMN = re.compile(r"^\W*(owners?|dri|assignee|assigned to|lead|responsible|who)\W*$", re.I)
_NO_ONE = re.compile(r"^\W*(?:tbd|tbc|\?+|-+|—|n/?a|none|nobody|unassigned|open)?\W*$", re.I)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _empty_owner_cells(doc: DocModule) -> Iterator[CheckHit]:
    """Rows of a table with an Owner column whose owner cell is empty, "TBD" or "?": one hit per table."""
    number = 0
    while number < len(doc.lines):
        header = doc.lines[number]
        following = doc.lines[number + 1] if number + 1 < len(doc.lines) else ""
        number += 1
        if (
            doc.in_code[number - 1]
            or not header.lstrip().startswith("|")
            or not re.match(r"^\s*\|?[\s:|-]+$", following)
        ):
            continue
        columns = _cells(header)
        owner = next((i for i, c in enumerate(columns) if _OWNER_COLUMN.match(c)), None)
        if owner is None:
            continue
        rows, missing = 0, []
        row = number + 1
        while row < len(doc.lines) and doc.lines[row].lstrip().startswith("|"):
            cells = _cells(doc.lines[row])
            rows += 1
            if owner < len(cells) and _NO_ONE.match(cells[owner]) and any(c for c in cells if c):
                missing.append((row + 1, cells[0] or cells[min(1, len(cells) - 1)]))
            row += 1
        number = row
        if missing:
            line, what = missing[0]
            more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
            yield CheckHit(
                line=line,
                title=f'"{_prose.quote(what, 50)}" has no owner in the table under "{doc.section_of(line)}"{more}',
                why="The table names an owner for the other rows; the row without one is the work that will drift "
                "until someone asks who was doing it.",
                fix="Put a person (or a team with a named contact) in the owner cell, or say why it has none yet and "
                "who decides by when.",
            )


def _closed(doc: DocModule) -> bool:
    for section in _prose.sections_named(doc, re.compile(r"^status$")):
        if re.search(
            r"\b(accepted|approved|superseded|rejected|deprecated|implemented)\b",
            _prose.section_text(doc, section),
            re.I,
        ):
            return True
    return False


@document_check(
    "doc-action-items-unowned",
    tag="people",
    severity="P2",
    summary="action items / next steps / TODOs that name no person, handle or team",
    match=[
        "# Incident review: checkout outage\n\n## Timeline\n\n10:02 alerts fired.\n\n## Action items\n\n"
        "- Add a timeout to the payment client\n- Alert on queue depth (@lee)\n- Write the runbook for failover\n",
        "# Offsite notes\n\n## Next steps\n\n1. Draft the hiring plan\n2. Book the venue for Q3\n",
    ],
    no_match=[
        "# Incident review: checkout outage\n\n## Action items\n\n- Add a timeout to the payment client (@lee)\n"
        "- Maria to write the failover runbook\n- Platform team: alert on queue depth\n",
        "# Getting started\n\n## Next steps\n\n- Read the [configuration guide](setup.md)\n- Try the tutorial\n",
    ],
)
def action_items_unowned(doc: DocModule) -> Iterator[CheckHit]:
    if _prose.kind(doc) is None:
        return
    for section in _prose.sections_named(doc, _ACTIONS_HEADING):
        if _ITEM_OWNED.search(section.heading.text) or _names_owner(section.heading.text):
            continue
        found = _prose.blocks(doc, section.heading.line + 1, section.end)
        if any(not b.item and _names_owner(b.text) for b in found):
            continue  # "Owner for all of these: @sam"
        items = [b for b in found if b.item]
        unowned = [b for b in items if not _ITEM_OWNED.search(b.text) and not _READER_STEP.match(b.text)]
        if not unowned:
            continue
        yield CheckHit(
            line=unowned[0].line,
            title=f'{len(unowned)} of {len(items)} items under "{section.heading.text}" name no owner: '
            f'"{_prose.quote(unowned[0].text, 60)}"',
            why="An action item without a name is everybody's and so nobody's; it is the first thing to be "
            "forgotten after the meeting.",
            fix="Put one person (or a team with a named contact) and a date on each item: '- Add the timeout (@lee, by Friday)'.",
        )


@document_check(
    "doc-human-load",
    tag="people",
    severity="P2",
    summary="on-call, support duty, team moves or new responsibilities with no staffing, handoff or training discussed",
    match=[
        "# Proposal: own the payments gateway\n\n## Change\n\nThe checkout team will also take on the payments "
        "gateway, including its on-call pager, from March.\n",
        "# Reorg proposal: platform\n\n## Moves\n\nAnna and Tom move to the data team. The platform team takes over "
        "support for the build farm.\n",
    ],
    no_match=[
        "# Proposal: own the payments gateway\n\n## Change\n\nThe checkout team will take on the gateway's on-call "
        "from March.\n\n## Transition\n\nTwo weeks of shadowing with the payments team; the rotation grows to "
        "6 people with the two hires.\n",
        "# Runbook\n\nWhen the pager fires, check the dashboard.\n",
    ],
)
def human_load(doc: DocModule) -> Iterator[CheckHit]:
    if _prose.kind(doc) is None:
        return
    load_title = _LOAD.search(_prose.title(doc))
    for block in _prose.blocks(doc):
        if _prose.in_background(doc, block.line):
            continue
        for sentence in block.sentences():
            load = _LOAD.search(sentence)
            if (
                load
                and (
                    load_title
                    or _prose.INTENT.search(sentence)
                    or _prose.FUTURE.search(block.text)
                    or re.search(r"\b(moves?|takes? over)\b", sentence)
                )
                and not _prose.handled(doc, block.line, _STAFFING, _STAFFING_SECTION)
            ):
                yield CheckHit(
                    line=block.line,
                    title=f'New load on people ("{_prose.quote(load.group(0), 40)}") in "{doc.section_of(block.line)}" '
                    "with no staffing, handoff or training discussed",
                    why="On-call, support duty and team moves land on people: without the rotation size, a handoff "
                    "and time to learn, the plan works on paper and burns out the team that carries it.",
                    fix="Say who carries it and how: rotation size, handoff or shadowing period, training or runbooks, "
                    "and what the team stops doing to make room.",
                )
                return
