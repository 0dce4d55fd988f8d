"""Document checks for decisions (fd-decisions, offline).

What a careful reviewer asks of a decision on paper before judging it on the
merits: were alternatives weighed, is a reason given (and is it evidence or
a feeling), and, for a door that only opens one way, is there a way back.
Judged only in documents that ask for or record a decision (plans,
proposals, ADRs, RFCs, PRDs, meeting notes), never in a README or changelog.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from fluxdrive.runtimes.static.checks import _prose
from fluxdrive.runtimes.static.checks.engine.document import DocModule
from fluxdrive.runtimes.static.checks.engine.registry import CheckHit, document_check

_DECISION_HEADING = re.compile(
    r"^(decision|decision outcome|the decision|proposal|proposed (solution|approach|design|change|plan)|"
    r"approach|recommendation|recommended approach|solution|our approach)$"
)
_ALTERNATIVE_HEADING = re.compile(
    r"\b(alternatives?|options|considered|trade-?offs?|comparison|prior art|rejected|other approaches)\b"
)
_ALTERNATIVE = re.compile(
    r"\b(alternatives?|options? (were |was )?considered|considered options|other options?|another option|"
    r"(?:options?|approach(?:es)?|proposals?|choices?|solutions?|variants?|rules?|scenarios?) #?[1-9a-d]\b|two options|three options|(both|either) options?|we (also )?considered|"
    r"(was|were|been) considered|considered (using|adopting|building|buying|keeping|moving|whether)|"
    r"instead of|rather than|as opposed to|versus|vs\.?|compared (to|with)|comparison|trade-?offs?|"
    r"rejected|pros and cons|chose \w+ over|over (using|keeping|building)|the other approach|the former|the latter|"
    r"whether\b[^.]{3,120}\bor\b)",
    re.I,
)
_DECIDED = re.compile(
    r"\b(we(?:'ve| have)? decided (?:to|that)|we(?:'ll| will) go with|we chose (?:to )?|we(?:'ve| have)? agreed to|"
    r"the decision (?:is|was) to|it was decided (?:to|that)|decision: )",
    re.I,
)
_WEIGHTY = re.compile(
    r"\b(adopt|build|buy|rewrite|re-?write|replace|migrate|move (?:to|off|onto|away)|switch|drop|deprecate|"
    r"decommission|retire|sunset|hire|reorg|re-?organi[sz]e|merge|split|consolidate|outsource|standardi[sz]e|"
    r"go with|use|invest|sign|cancel|launch|freeze|shut|delete|remove|centrali[sz]e|rebuild)\w*",
    re.I,
)
_CHOICE = re.compile(
    r"\b(will|shall|should|must|decided|decide|chose|choose|chosen|adopt\w*|use|using|going to|propose\w*|recommend\w*|"
    r"agreed|are to|is to|we'll|plan to)\b|^(?:we\s+)?(?:use|adopt|add|move|split|replace|create|migrate|merge|remove|keep|build|"
    r"buy|switch|introduce|deprecate|drop|run|store|centrali[sz]e|standardi[sz]e|give|set|expose|retire)\b",
    re.I,
)
_RATIONALE = re.compile(
    r"\b(because|since|so that|in order to|due to|as a result|given (that|the|our)|the reason|reasons?|rationale|"
    r"drivers?|criteria|evidence|benchmark\w*|measur\w*|data (shows?|suggests?)|which (means|lets|allows|gives|"
    r"removes|reduces|avoids)|this (lets|allows|enables|means|gives|removes|reduces|avoids|makes|saves)|"
    r"to (reduce|avoid|improve|simplify|remove|lower|cut|speed up|enable|allow|support|keep|meet|comply|save|"
    r"unblock|fix|prevent|eliminate)|costs?|cheaper|faster than|slower than|trade-?offs?|pros|cons|why|"
    r"risk\w*|blocked|blocker|deadline|end of life|eol|unsupported|out of support)\b"
    r"|\d+(\.\d+)?\s*(%|ms|x\b|×|times|hours?|days?|weeks?|minutes?|k\b|gb|mb|£|\$)|[£$€]\s?\d",
    re.I,
)
_CONTEXT_HEADING = re.compile(
    r"^(context|background|motivation|problem|problem statement|why|rationale|decision drivers|reasoning|"
    r"justification|context and problem statement|goals?|summary)$"
)
_OPINION = re.compile(
    r"\b(?:(?:everyone|everybody|the team|we all|most people|most of us|all of us|the group|people)\s+"
    r"(?:felt|feels|thought|thinks|believed|believes|agreed|liked)\b[^.;]{0,60}?\b(?:would be|will be|is|was|are)\s+"
    r"(?:much |a lot |way |probably |definitely )?(?:better|faster|easier|simpler|cleaner|nicer|the right|the best|"
    r"more \w+|less \w+)"
    r"|gut (?:feeling|feel|instinct)|it feels (?:faster|better|simpler|cleaner|easier|right)"
    r"|we (?:just )?(?:feel|felt) (?:that )?(?:it|this|that)(?:'s| is| was| would be| will be) (?:better|faster|easier|"
    r"simpler|cleaner|the right))",
    re.I,
)
_DATA = re.compile(
    r"\b(benchmark\w*|measur\w*|profil\w*|data|metrics?|load test|experiment|a/b|p\d\d|survey)\b|\d+(\.\d+)?\s*(%|ms|x\b|×|s\b)",
    re.I,
)
_CLOSED_STATUS = re.compile(r"\b(accepted|approved|superseded|deprecated|rejected|implemented|done|agreed)\b", re.I)

# One-way doors: verbs whose effect cannot simply be undone.
_ONE_WAY = re.compile(
    r"\b(?:(?:delet(?:e|es|ing)|purg(?:e|es|ing)|wip(?:e|es|ing)|truncat(?:e|es|ing)|destroy(?:s|ing)?)\s+"
    r"(?:all\s+|the\s+|old\s+|existing\s+|legacy\s+|historical\s+|customer\s+|user\s+|our\s+)*"
    r"(?:\w+\s+)?(?:data|records|rows|tables?|database|buckets?|backups?|accounts?|archives?|logs|history|cluster)"
    r"|drop(?:s|ping)?\s+(?:the\s+|a\s+)?(?:[\w`]+\s+)?(?:tables?|columns?|databases?|schemas?|support\s+for)"
    r"|decommission\w*"
    r"|deprecat(?:e|es|ing|ion\s+of)\s+(?:the\s+|our\s+)?[\w-]+"
    r"|rewrit(?:e|es|ing)\s+(?:the\s+|our\s+)?(?:\w+\s+){0,3}?(?:in|from\s+scratch|with|as)\b"
    r"|(?:migrat\w*|mov(?:e|es|ing))\s+(?:off|away\s+from|out\s+of)\b"
    r"|(?:shut(?:s|ting)?\s+down|sunset\w*|turn(?:s|ing)?\s+off|switch(?:es|ing)?\s+off|retir(?:e|es|ing))\s+"
    r"(?:the\s+|our\s+)?(?:old\s+|legacy\s+|existing\s+|current\s+)?(?:[\w-]+\s+)?(?:service|system|platform|"
    r"cluster|database|data\s?cent(?:er|re)|product|api|app|application|servers?|region|datacenter)s?\b"
    r"|sign(?:s|ing)?\s+(?:a\s+|the\s+)?(?:[\w-]+\s+)?(?:multi-?year|\d+-year|(?:two|three|four|five)-year|long-term)\s+"
    r"(?:\w+\s+)?(?:contract|deal|agreement|commitment|licen[cs]e)"
    r"|commit(?:s|ting)?\s+to\s+a\s+(?:\d+|two|three|four|five)-year"
    r"|non-?cancell?able|(?:\d+|two|three|four|five|multi)-year\s+(?:\w+\s+){0,2}?(?:commitment|commit|contract|lock-?in)"
    r"|(?:code|data|plans?|tables?|records|accounts|features?|tiers?|systems?|services?)(?:\s+[\w-]+){0,3}?\s+"
    r"(?:is|are|will\s+be|gets?)\s+(?:deleted|removed|dropped|retired|decommissioned|discontinued)\b)",
    re.I,
)
_STEPS_HEADING = re.compile(
    r"\b(steps?|plan|rollout|roll-out|timeline|milestones?|phases?|migration|cutover|execution|next steps|actions?)\b"
)
_EXIT = re.compile(
    r"\b(pre-?mortem|risks?|rollback|roll(?:ing)?[- ]back|revert\w*|reversib\w*|irreversib\w*|one-way door|"
    r"two-way door|exit (?:plan|strategy|criteria|clause|ramp|path)|fallback|fall back|contingency|back out|backout|"
    r"undo|restor\w*|snapshot\w*|backups?|archiv\w*|escape hatch|kill switch|pilot|trial|break clause|"
    r"termination clause|opt-out|grace period|what could go wrong|if (?:this|it) fails|go/no-go|no-go)\b",
    re.I,
)


def _closed_record(doc: DocModule) -> bool:
    """An ADR whose Status (section or front matter) says it is already decided."""
    status = _prose.front_matter(doc).get("status", "")
    for section in _prose.sections_named(doc, re.compile(r"^status$")):
        status += " " + _prose.section_text(doc, section)
    return bool(_CLOSED_STATUS.search(status))


def _has_alternatives(doc: DocModule) -> bool:
    if any(_ALTERNATIVE_HEADING.search(s.key) for s in _prose.sections(doc)):
        return True
    return any(_ALTERNATIVE.search(text) for _n, text in _prose.prose_lines(doc))


@document_check(
    "doc-decision-single-option",
    tag="decisions",
    severity="P2",
    summary="a decision or proposal that presents one option and names no alternative it was weighed against",
    match=[
        "# RFC: Job queue\n\n## Context\n\nThe cron jobs overlap and fail silently.\n\n"
        "## Proposal\n\nWe move every background job to Sidekiq, backed by the existing Redis.\n\n"
        "## Rollout\n\nOne job a week, starting with the nightly export.\n",
        "# Platform offsite notes\n\n- We decided to rewrite the importer in Rust this quarter.\n- Lunch was good.\n",
    ],
    no_match=[
        "# RFC: Job queue\n\n## Proposal\n\nWe move every background job to Sidekiq.\n\n"
        "## Alternatives considered\n\n- Keep cron, add alerting: cheaper, but jobs still overlap.\n",
        "# Offsite notes\n\nWe decided to use Postgres rather than DynamoDB for the ledger.\n",
        "# Changelog\n\nWe decided to drop Python 3.8.\n",
    ],
)
def decision_single_option(doc: DocModule) -> Iterator[CheckHit]:
    kind = _prose.kind(doc)
    if kind is None or _has_alternatives(doc):
        return
    if kind == "adr" and _closed_record(doc):
        return  # an accepted record is history; its alternatives cannot be weighed any more
    if kind in ("adr", "plan", "prd"):
        for section in _prose.sections_named(doc, _DECISION_HEADING):
            found = _prose.blocks(doc, section.heading.line + 1, section.end)
            if not found or not _CHOICE.search(found[0].sentences()[0]):
                continue  # no choice stated ("We have outlined the current architecture"): nothing to weigh
            yield CheckHit(
                line=section.heading.line,
                title=f'"{section.heading.text}" presents one option and names no alternative: '
                f'"{_prose.quote(found[0].sentences()[0])}"',
                why="A decision with no alternatives on the page cannot be reviewed as a choice: readers cannot tell "
                "whether the obvious other options (including doing nothing) were weighed or missed.",
                fix="Add an 'Alternatives considered' section: two or three real options, including the status quo, "
                "and why each lost.",
            )
            return
    found = _prose.blocks(doc)
    for index, block in enumerate(found):
        if _prose.in_background(doc, block.line):
            continue
        for sentence in block.sentences():
            decided = _DECIDED.search(sentence)
            if not decided or not _WEIGHTY.search(sentence[decided.end() :][:60]):
                continue
            if _ALTERNATIVE.search(_prose.near(found, index)):
                continue
            yield CheckHit(
                line=block.line,
                title=f'Decision with no alternative named in "{doc.section_of(block.line)}": '
                f'"{_prose.quote(sentence)}"',
                why="Recorded this way, the decision reads as the only option there was; later readers cannot tell "
                "what was ruled out, or why, when they revisit it.",
                fix="Name the options that were weighed (at least the status quo) and why this one won.",
                severity="P3" if kind == "notes" else None,
            )
            return


def _has_context(doc: DocModule) -> bool:
    for section in _prose.sections_named(doc, _CONTEXT_HEADING):
        if len(_prose.section_text(doc, section).split()) >= 5:
            return True
    return False


@document_check(
    "doc-decision-no-rationale",
    tag="decisions",
    severity="P2",
    summary="a decision stated with no reason, criteria or evidence, or justified by opinion ('everyone felt')",
    match=[
        "# Platform sync notes\n\n## Decisions\n\n- We decided to rewrite the importer in Rust.\n"
        "- Maria presents it at the all-hands.\n",
        "# Proposal: importer\n\n## Decision\n\nWe will rewrite the importer in Rust. Everyone felt it would be "
        "faster than the current one.\n",
    ],
    no_match=[
        "# Platform sync notes\n\n- We decided to rewrite the importer in Rust because the Python version "
        "spends 80% of its time in parsing.\n",
        "# ADR 7: Importer\n\n## Context\n\nThe importer takes 40 minutes a night and blocks the morning reports; "
        "profiling shows the time goes to parsing.\n\n## Decision\n\nWe will rewrite the importer in Rust.\n",
    ],
)
def decision_no_rationale(doc: DocModule) -> Iterator[CheckHit]:
    kind = _prose.kind(doc)
    if kind is None:
        return
    found = _prose.blocks(doc)
    context = _has_context(doc)
    for index, block in enumerate(found):
        opinion = _OPINION.search(block.text)
        if opinion and not _DATA.search(block.text):
            yield CheckHit(
                line=block.line,
                title=f'Opinion offered as evidence in "{doc.section_of(block.line)}": "{_prose.quote(opinion.group(0))}"',
                why="A shared feeling is not evidence: nobody can check it later, and it tends to hide the one "
                "measurement that would have changed the decision.",
                fix="Replace it with what was observed or measured (a benchmark, a cost, an incident), or state it as "
                "an assumption to be tested.",
            )
            continue
        if context or _prose.in_background(doc, block.line):
            continue
        for sentence in block.sentences():
            decided = _DECIDED.search(sentence)
            if not decided or not _WEIGHTY.search(sentence[decided.end() :][:60]):
                continue
            if _RATIONALE.search(_prose.near(found, index)):
                continue
            yield CheckHit(
                line=block.line,
                title=f'Decision with no stated reason in "{doc.section_of(block.line)}": "{_prose.quote(sentence)}"',
                why="Without the reason, nobody can tell later whether the decision still holds when the facts change, "
                "and reviewers cannot check the reasoning now.",
                fix="Add the reason next to the decision: the problem it solves, the criteria used, and the evidence.",
            )
            break
    if kind not in ("adr", "plan", "prd") or context:
        return
    for section in _prose.sections_named(doc, re.compile(r"^(decision|decision outcome|the decision)$")):
        text = _prose.section_text(doc, section)
        if text.strip() and not _RATIONALE.search(text) and not _DECIDED.search(text):
            first = _prose.blocks(doc, section.heading.line + 1, section.end)[0]
            yield CheckHit(
                line=section.heading.line,
                title=f'"{section.heading.text}" gives no reason: "{_prose.quote(first.sentences()[0])}"',
                why="A decision record without its reasoning cannot be re-examined when circumstances change.",
                fix="Add the context and the reasons (criteria, evidence, constraints) the decision rests on.",
            )


@document_check(
    "doc-irreversible-no-exit",
    tag="decisions",
    severity="P2",
    summary="a one-way-door action (delete, decommission, drop, rewrite, migrate off, multi-year contract) "
    "with no risks, exit or reversibility discussed",
    match=[
        "# Proposal: leave Mongo\n\n## Plan\n\nWe will migrate off MongoDB by June and decommission the cluster "
        "the week after.\n\n## Owner\n\n@sam\n",
        "# Vendor decision\n\n## Decision\n\nWe will sign a three-year contract with Acme for search.\n",
    ],
    no_match=[
        "# Proposal: leave Mongo\n\n## Plan\n\nWe will migrate off MongoDB and decommission the cluster.\n\n"
        "## Risks\n\nData drift during the dual-write period; we keep a final snapshot for 90 days.\n",
        "# History\n\nThe old cluster was decommissioned in 2019.\n",
        "# README\n\nThe `--legacy` flag will be deprecated in 2.0.\n",
    ],
)
def irreversible_no_exit(doc: DocModule) -> Iterator[CheckHit]:
    kind = _prose.kind(doc)
    if kind is None:
        return
    if any(_EXIT.search(s.key) for s in _prose.sections(doc)):
        return
    steps = [s for s in _prose.sections(doc) if _STEPS_HEADING.search(s.key)]
    heading = _ONE_WAY.search(_prose.title(doc))
    if heading and kind in ("adr", "plan"):
        yield _irreversible(_prose.title_line(doc), heading.group(0), "the title")
        return
    for block in _prose.blocks(doc):
        if _prose.in_background(doc, block.line):
            continue
        in_steps = block.item and any(s.contains(block.line) for s in steps)
        for sentence in block.sentences():
            action = _ONE_WAY.search(sentence)
            if (
                action
                and (in_steps or _prose.INTENT.search(sentence))
                and not _prose.handled(doc, block.line, _EXIT, after=1)
            ):
                yield _irreversible(block.line, action.group(0), f'"{doc.section_of(block.line)}"')
                return


def _irreversible(line: int, action: str, where: str) -> CheckHit:
    return CheckHit(
        line=line,
        title=f'One-way action "{_prose.quote(action, 50)}" in {where} with no risks, exit or way back discussed',
        why="Deleting, decommissioning, rewriting or signing a long commitment is expensive or impossible to undo; "
        "a plan that never asks what happens if it goes wrong finds out in production.",
        fix="Add a short premortem: what could go wrong, how you would notice, and how to reverse or contain it "
        "(snapshot, dual-run period, exit clause, go/no-go point).",
    )
