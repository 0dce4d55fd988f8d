"""Document checks for resilience (fd-resilience, offline).

The questions an operator asks of a plan before it ships: how do we undo it,
what happens when the thing it now depends on is down or slow, and how fast
do we get back after losing data. Judged only in plans, designs, RFCs, ADRs
and PRDs. doc-no-rollback took over the rollback expectation documents.py's
doc-missing-sections used to carry.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from fluxdrive.runtimes.static.checks import _prose
from fluxdrive.runtimes.static.checks.engine.document import DocModule
from fluxdrive.runtimes.static.checks.engine.registry import CheckHit, document_check

_CHANGE = re.compile(
    r"\b(migrat\w*|cut ?over|cut-over|switch ?over|switch-over|roll(?:s|ing)? ?out|roll-out|deploy\w*|backfill\w*|"
    r"schema change|upgrad(?:e|es|ing)|switch (?:all )?traffic|flip (?:the )?traffic|decommission\w*|"
    r"go[- ]live|launch(?:es|ing)?)\b",
    re.I,
)
_DATA = re.compile(
    r"\b(data migration|migrat\w* (?:the |our |all |existing )?(?:[\w`-]+ )?(?:data|tables?|records|rows|database|schema|"
    r"users|accounts)|schema (?:change|migration)s?|backfill\w*|(?:add|drop|alter|rename|create|remove)\w* (?:the |a |an |new )?"
    r"(?:[\w`-]+ )?(?:columns?|tables?|index(?:es)?|fields?)|delet\w* (?:the |all |old )?(?:[\w-]+ )?(?:data|records|rows|"
    r"accounts|users)|drop(?:s|ping)? (?:the )?(?:`|[\w-]+ (?:columns?|tables?|database|index))|decommission\w*|purg\w*|"
    r"truncat\w*|(?:stored|persisted) (?:[\w-]+ ){0,2}(?:objects|data|records|documents))",
    re.I,
)
_ROLLBACK = re.compile(
    r"\b(roll(?:ing)?[- ]?back|rollbacks?|revert\w*|back[- ]?out|downgrad\w*|undo|switch(?:ing)? back|fail(?:ing)? back|"
    r"fallback|fall back|kill[- ]switch|feature[- ]flags?|flag (?:it )?off|disable the flag|restore (?:from|the)|"
    r"abort (?:criteria|plan)|go/no-go|no-go|(?:turn|switch)(?:s|ing|ed)?\s+(?:\S+\s+){0,2}?off)\b",
    re.I,
)
# Steps after which the old way is gone: writes move for good, the old path or store is removed.
_ONE_WAY_HEADING = re.compile(r"\b(cut ?over|cut-over|switch ?over|decommission\w*|sunset\w*|shut ?down)\b", re.I)
_ONE_WAY_STEP = re.compile(
    r"\b((?:writes?|traffic) (?:go(?:es)? )?(?:to|into) [\w-]+ only|"
    r"writes? to [\w-]+ only|only (?:writes?|reads?) (?:to|from)|decommission\w*|(?:old|legacy|previous) [\w -]{0,30}?"
    r"(?:cluster|index|nodes?|database|store|system)s? (?:is |are |will be |gets? )?(?:deleted|removed|destroyed|"
    r"torn down|shut down|decommissioned)|(?:delete|destroy|tear down|terminate) (?:the )?(?:old|legacy|previous) "
    r"[\w -]{0,30}?(?:cluster|index|nodes?|database|store|system)s?|drop(?:s|ped|ping)? (?:the )?"
    r"(?:[\w-]+ )?(?:tables?|columns?|database|schema)|delet\w+ (?:the )?(?:old|legacy|[\w-]+ )?(?:data|tables?|rows|"
    r"records)|(?:remov\w+|delet\w+) (?:the )?(?:old |legacy )?(?:[\w-]+ )?(?:write path|read path|dual[- ]writes?|"
    r"flag)|retir\w+|shut(?:ting)? down|revok\w+)\b",
    re.I,
)
# What keeps a way back after a destructive step: a copy to restore from.
_KEPT_COPY = re.compile(
    r"\b(backups?|snapshots?|dumps?|mysqldump|pg_dump|archiv\w*|export\w* (?:a |the )?(?:final )?copy)\b", re.I
)
_PHASE_HEADING = re.compile(
    r"\b(phases?|stages?|steps?|waves?|milestones?|cutover|cut-over|decommission\w*|go-live|rollout|roll-out|"
    r"migration|timeline|schedule|execution|plan)\b"
)
_DEPENDENCY = re.compile(
    r"\b(third[- ]party(?: [\w-]+)? (?:api|service|provider|vendor|system|endpoint|platform)s?|external (?:api|service|provider|vendor|system)s?|"
    r"(?:vendor|partner|provider)(?:'s)? (?:api|service)s?|webhooks?|message (?:queue|broker|bus)|queues?|kafka|sqs|sns|"
    r"rabbitmq|pub/?sub|kinesis|nats|redis|memcached|elasticsearch|opensearch|stripe|twilio|sendgrid|auth0|okta|"
    r"openai|anthropic|salesforce|zendesk|hubspot|mailchimp|paypal|adyen|plaid|jetstream|pulsar|"
    r"[a-z][\w]*-(?:svc|service|api|gateway)|(?:new|separate|dedicated) (?:[\w-]+ ){0,3}(?:cluster|service|broker|datastore))\b",
    re.I,
)
# What makes a mentioned dependency new in this document: "a new cluster", "made synchronously", "is added".
_NEW_DEPENDENCY = re.compile(
    r"\b(new|synchronous(?:ly)?|in the request(?: path)?|on the (?:request|hot|critical) path|is added|are added|"
    r"introduc\w*)\b",
    re.I,
)
# A section whose subject is failure handling answers for every dependency.
_FAILURE_SECTION = re.compile(
    r"\b(failure|failures|failure modes?|resilien\w*|reliability|degrad\w*|error handling|outages?|dependencies)\b"
)
_DEPEND_VERB = re.compile(
    r"\b(call(?:s|ing)?|quer(?:y|ies|ying)|depend(?:s|ing)? on|integrat\w*|publish(?:es|ing)? (?:to|on)|"
    r"consum(?:e|es|ing) (?:from)?|fetch(?:es|ing)? (?:from)?|send(?:s|ing)? [\w\s]{0,30}?to|post(?:s|ing)? to|"
    r"push(?:es|ing)? to|read(?:s|ing)? from|writ(?:e|es|ing) to|store[sd]? (?:it |them )?in|enqueue\w*|"
    r"look(?:s|ing)? up|verif(?:y|ies) (?:with|against)|backed by|relies on|rely on|via|using|uses?|"
    r"live[sd]? (?:on|in)|run(?:s|ning)? on|hosted (?:on|by)|made synchronous\w*)\b",
    re.I,
)
_FAILURE = re.compile(
    r"\b(time ?outs?|timed out|retr(?:y|ies|ied|ying)|fallback|fall back|degrad\w*|circuit[- ]breakers?|"
    r"unavailab\w*|outages?|downtime|is down|are down|goes down|go down|failure modes?|fails? (?:open|closed)|"
    r"dead[- ]letter|back-?off|bulkhead|rate[- ]limit\w*|if [\w\s]{1,40}? (?:fails|is slow|errors)|"
    r"when [\w\s]{1,40}? (?:fails|is slow|is unreachable)|unreachable|resilien\w*|slow responses?|latency budget|"
    r"graceful\w*|best[- ]effort|idempoten\w*|queue(?:s|d)? (?:up )?until)\b",
    re.I,
)
_RECOVERY_TOPIC = re.compile(
    r"\b(restor\w* (?:it |them |the \w+ )?from (?:the |a )?(?:latest |last |nightly |daily )?(?:snapshots?|backups?)|(?:nightly|daily|hourly|weekly|ebs|rds|volume|disk) snapshots?|backups?|back(?:ed)? up|disaster recovery|dr plan|dr site|fail ?over|failovers?|fail-over|"
    r"high availability|\d{2}(?:\.\d+)?% (?:uptime|availability)|(?:uptime|availability) (?:target|sla|guarantee)|"
    r"slas?|multi-?region|multi-?az|hot standby|warm standby|standby (?:database|instance|cluster|region|replica))\b",
    re.I,
)
_RECOVERY_TARGET = re.compile(
    r"\b(rto|rpo|recovery (?:time|point)|restore (?:time|within|in under|in \d|takes|drill|test\w*)|"
    r"(?:tested|test(?:ing)?|rehears\w*|practis\w*|practic\w*) (?:the )?(?:restores?|recovery|failover)|"
    r"restor\w* (?:from backups? )?(?:takes|within|in under|in \d)|(?:lose|loss of|losing) (?:at most|no more than|up to)|"
    r"data loss (?:of|window|budget)|game ?days?|dr (?:test|drill|exercise)|point[- ]in[- ]time recovery|pitr)\b",
    re.I,
)
_DESIGN_KINDS = ("plan", "prd", "adr")
_STEPS = re.compile(r"\b(steps?|plan|rollout|roll-out|timeline|milestones?|phases?|execution|cutover|sequence)\b")


def _has(doc: DocModule, pattern: re.Pattern[str]) -> bool:
    if any(pattern.search(h.text) for h in doc.headings):
        return True
    return any(pattern.search(text) for _n, text in _prose.prose_lines(doc))


@document_check(
    "doc-no-rollback",
    tag="resilience",
    severity="P2",
    summary="a migration, cutover or rollout plan with no rollback / revert / back-out (P1 when it touches data)",
    match=[
        "# Migration plan: orders table\n\n## Steps\n\n1. Add the `status_v2` column.\n2. Backfill it from "
        "`status`.\n3. Deploy the reader that uses `status_v2`.\n4. Drop `status`.\n\n## Testing\n\nStaging first.\n",
        "# Rollout plan: new checkout page\n\n## Steps\n\n1. Deploy behind the load balancer.\n2. Switch all "
        "traffic on Monday.\n\n## Monitoring\n\nWatch the conversion dashboard.\n",
        "# Migration plan: sessions to Redis\n\n## Phase 1: dual writes\n\nWrite sessions to both stores behind the "
        "`dual` flag; turning the flag off is the rollback.\n\n## Phase 2: cutover\n\n1. Read from Redis.\n"
        "2. Remove the dual-write path and drop the `sessions` table.\n",
    ],
    no_match=[
        "# Migration plan: orders table\n\n## Steps\n\n1. Add the column.\n2. Backfill it.\n\n## Rollback\n\n"
        "The old column stays until the new reader has run for a week; reverting is a redeploy.\n",
        "# Rollout plan: new checkout page\n\n1. Deploy behind the `new_checkout` feature flag at 5%.\n"
        "2. Ramp to 100% over a week.\n",
        "# Team charter\n\nWe deploy twice a week.\n",
        "# Migration plan: sessions to Redis\n\n## Phase 1: dual writes\n\nTurning the `dual` flag off is the "
        "rollback.\n\n## Phase 2: cutover\n\nRemove the dual-write path. Until the table is dropped a week later, "
        "rolling back is re-enabling the path and replaying the log.\n",
    ],
)
def no_rollback(doc: DocModule) -> Iterator[CheckHit]:
    if _prose.kind(doc) != "plan":
        return
    if _has(doc, _ROLLBACK):
        yield from _phase_without_way_back(doc)
        return
    change = _CHANGE.search(_prose.title(doc))
    if change is None:  # not named a migration or rollout: its steps or a heading must make it one
        change = next((m for h in doc.headings if (m := _CHANGE.search(h.text))), None)
    if change is None:
        steps = [s for s in _prose.sections(doc) if _STEPS.search(s.key)]
        items = (b for s in steps for b in _prose.blocks(doc, s.heading.line + 1, s.end) if b.item)
        change = next((m for b in items if (m := _CHANGE.search(b.text))), None)
    if change is None:
        return
    goals = _prose.sections_named(doc, _prose.NON_GOALS)
    in_scope = [doc.lines[n - 1] for n, _t in _prose.prose_lines(doc) if not any(s.contains(n) for s in goals)]
    data = _DATA.search(_prose.title(doc)) or next((m for t in in_scope if (m := _DATA.search(t))), None)
    what = change.group(0)
    yield CheckHit(
        line=_prose.title_line(doc),
        title=f'The plan ("{_prose.quote(what, 30)}") has no rollback: nothing says how to revert or back out'
        + (f' (it touches data: "{_prose.quote(data.group(0), 30)}")' if data else ""),
        why="A rollout with no way back turns the first surprise into an outage; when data is migrated, a late "
        "rollback may be impossible without one planned in advance.",
        fix="Add a 'Rollback' section: the trigger (what you watch and the threshold), the steps, how long they take, "
        "and the last point at which rolling back is still possible (keep old columns/data until then).",
        severity="P1" if data else "P2",
    )


def _phase_without_way_back(doc: DocModule) -> Iterator[CheckHit]:
    """The plan rolls back somewhere, but a one-way step has no way back of its own.

    A phased migration often plans the rollback of its first, reversible
    phase (turn the dual-write flag off) and not of the cutover, where it is
    needed; a rollout list often rolls back its canary and then deletes the
    old cluster. A one-way step (in a phase, rollout or steps section) needs
    a way back in its own block or after it (or a copy kept to restore from),
    or a dedicated Rollback section that names it. Rollback said only before
    the step is about the steps before it.
    """
    dedicated = [s for s in _prose.sections(doc) if _ROLLBACK.search(s.key)]
    covered = " ".join(_prose.section_text(doc, s) for s in dedicated).lower()
    for section in (s for s in _prose.sections(doc) if _PHASE_HEADING.search(s.key) and s not in dedicated):
        found = _prose.blocks(doc, section.heading.line + 1, section.end)
        raw = [_prose.raw_text(doc, b) for b in found]
        index = next((i for i, text in enumerate(raw) if _ONE_WAY_STEP.search(text)), None)
        heading_step = _ONE_WAY_HEADING.search(section.heading.text)
        if index is None and heading_step is None:
            continue
        start = 0 if index is None else index  # a cutover phase answers for all of its blocks
        later = " ".join(raw[start:])
        if _ROLLBACK.search(later) or _KEPT_COPY.search(later):
            continue
        step = heading_step if index is None else _ONE_WAY_STEP.search(raw[index])
        assert step is not None
        name = re.sub(r"\(.*?\)", "", section.heading.text).strip().lower()
        if name and (name in covered or step.group(0).lower() in covered):
            continue
        line = found[index].line if index is not None else section.heading.line
        stores = re.search(
            r"\b(writes?|tables?|databases?|mysql|postgres\w*|rows|records|schema|clusters?|indexes|indices)\b",
            later,
            re.I,
        )
        data = _DATA.search(later) or stores
        yield CheckHit(
            line=line,
            title=f'"{_prose.quote(section.heading.text, 50)}" has no way back: "{_prose.quote(step.group(0), 40)}" '
            "is a one-way step and rollback is planned only for what comes before it",
            why="The rollback a plan describes for an early, reversible step does not help after the step that "
            "removes the old path; a surprise found after it has no planned way back.",
            fix="Say how to go back after this step (reverse replication, keeping the old write path or cluster for "
            "a period, a restore from a named copy) and until when that stays possible, or make the step reversible.",
            severity="P1" if data else "P2",
        )
        return


@document_check(
    "doc-failure-modes-missing",
    tag="resilience",
    severity="P2",
    summary="a design that adds a dependency on an external service, queue or database and never says what "
    "happens when it is down or slow",
    match=[
        "# Design: address autocomplete\n\n## Approach\n\nThe signup form will call the third-party Loqate API on every "
        "keystroke and show the first five suggestions.\n\n## Testing\n\nContract tests against the sandbox.\n",
        "# RFC: order events\n\n## Proposal\n\nThe order service will publish an event to Kafka for every state "
        "change; billing will consume from the topic.\n",
    ],
    no_match=[
        "# Design: address autocomplete\n\nThe form will call the third-party Loqate API with a 300 ms timeout; when it is "
        "unavailable the user types the address by hand.\n",
        "# Notes on Kafka\n\nKafka is a log.\n",
    ],
)
def failure_modes_missing(doc: DocModule) -> Iterator[CheckHit]:
    if _prose.kind(doc) not in _DESIGN_KINDS:
        return
    found = list(_new_dependencies(doc))
    # The strongest evidence first: a dependency the text calls new or synchronous, then any planned one.
    for block, dependency, strong in sorted(found, key=lambda f: (not f[2], f[0].line)):
        if _prose.handled(doc, block.line, _FAILURE, _FAILURE_SECTION, after=1):
            continue
        yield CheckHit(
            line=block.line,
            end_line=block.end,
            title=f'{"New dependency" if strong else "Dependency"} on "{_prose.quote(dependency, 40)}" in '
            f'"{doc.section_of(block.line)}" with no word on what happens when it is down or slow',
            why="Every remote dependency fails and slows down sometimes; a design that does not say what then "
            "gets the default: requests pile up behind it and its outage becomes yours.",
            fix="Add a 'Failure modes' paragraph: the timeout, whether and how it retries, the fallback or "
            "degraded behaviour, and how you will notice.",
        )
        return


def _new_dependencies(doc: DocModule) -> Iterator[tuple[_prose.Block, str, bool]]:
    """(block, dependency, called new or synchronous) for each block that adds a dependency."""
    for block in _prose.blocks(doc):
        if _prose.in_background(doc, block.line):
            continue
        for sentence in _prose.split_sentences(_prose.raw_text(doc, block)):  # service names live in code spans
            dependency = _DEPENDENCY.search(sentence)
            strong = bool(_NEW_DEPENDENCY.search(sentence))
            if dependency and _DEPEND_VERB.search(sentence) and (strong or _prose.INTENT.search(sentence)):
                yield block, dependency.group(0), strong
                break


@document_check(
    "doc-recovery-unspecified",
    tag="resilience",
    severity="P2",
    summary="backups, disaster recovery, failover or an SLA mentioned with no recovery target (RTO/RPO, tested restore)",
    match=[
        "# Design: ledger service\n\n## Storage\n\nPostgres on RDS with nightly backups and a standby replica in "
        "a second zone.\n\n## API\n\nREST.\n",
        "# RFC: status page\n\n## Availability\n\nThe service will offer a 99.95% availability SLA with automatic "
        "failover.\n",
    ],
    no_match=[
        "# Design: ledger service\n\n## Storage\n\nNightly backups and point-in-time recovery; RPO 5 minutes, "
        "RTO 1 hour, restore tested quarterly.\n",
        "# Meeting notes\n\nWe talked about backups.\n",
    ],
)
def recovery_unspecified(doc: DocModule) -> Iterator[CheckHit]:
    if _prose.kind(doc) not in _DESIGN_KINDS or _has(doc, _RECOVERY_TARGET):
        return
    goals = _prose.sections_named(doc, _prose.NON_GOALS)
    for number, text in _prose.prose_lines(doc):
        topic = _RECOVERY_TOPIC.search(text)
        if topic and not any(s.contains(number) for s in goals) and not _prose.in_background(doc, number):
            yield CheckHit(
                line=number,
                title=f'"{_prose.quote(topic.group(0), 40)}" in "{doc.section_of(number)}" with no recovery target '
                "(RTO/RPO, restore time, tested restore)",
                why="Backups and failover are only as good as the restore nobody has timed: without a recovery time "
                "and a data-loss budget, nobody can tell whether the design meets the promise.",
                fix="State the RPO (how much data you may lose) and RTO (how long until service is back), and how and "
                "how often the restore or failover is tested.",
            )
            return
