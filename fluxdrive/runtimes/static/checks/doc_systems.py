"""Document checks for systems thinking (fd-systems, offline).

How a plan behaves once it meets the system it changes: a target with no
starting point cannot be judged, a number people are measured on gets
gamed unless something measures quality beside it (Goodhart's law), and an
automatic reaction with no cap can feed itself. Judged only where a plan
sets targets or adds automation, never in a README's feature list.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from fluxdrive.runtimes.static.checks import _prose
from fluxdrive.runtimes.static.checks.engine.document import DocModule
from fluxdrive.runtimes.static.checks.engine.registry import CheckHit, document_check

_NUMBER = r"\d+(?:[.,]\d+)?"
_CHANGE_TARGET = re.compile(
    r"\b(?:reduc\w*|increas\w*|improv\w*|cut(?:s|ting)?|lower\w*|rais\w*|grow\w*|boost\w*|decreas\w*|"
    r"bring(?:s|ing)? down|speed(?:s|ing)? up|shorten\w*|take|get|push|move|lift)\b[^.;:]{0,60}?\b(?:by|to)\s+"
    r"(?:at least\s+|~|about\s+)?"
    rf"(?:{_NUMBER}\s*(?:%|x\b|×|percent|points?|pp\b|ms\b|s\b|seconds?|minutes?|hours?|days?|k\b)|half|a third|a quarter)"
    r"|\bcut\w*\s+[^.;:]{1,40}?\s+in\s+half",
    re.I,
)
# "p99 latency down to 120 ms", "error rate under 0.1%": a level to reach, which also needs a starting point.
_LEVEL_TARGET = re.compile(
    r"\b(?:p\d{2}|latency|response time|error rate|uptime|availability|conversion|churn|retention|nps|load time|"
    r"build time|ci time|lead time|cost)\b[^.;:]{0,40}?\b(?:down to|up to|to under|under|below|at most|at least|of)\s+"
    rf"{_NUMBER}\s*(?:%|ms\b|s\b|seconds?|minutes?)",
    re.I,
)
# "our goal is 9% trial-to-paid", "target: 40% of revenue": a level stated as the goal itself.
_GOAL_LEVEL = re.compile(
    rf"\b(?:goal|target|aim|objective)s?\b[^.;]{{0,30}}?\b(?:is|of|at|:)\s+(?:to (?:reach|hit|get to) )?(?:~|about )?{_NUMBER}\s*%",
    re.I,
)
_TARGET_FRAME = re.compile(
    r"\b(goals?|targets?|objectives?|okrs?|key results?|krs?|kpis?|aims?|success (?:metrics?|criteria|measures?)|"
    r"we (?:will|want to|aim to|plan to|expect to)|our aim|north star|by (?:q[1-4]|the end of|end of|\d{4}|"
    r"january|february|march|april|may|june|july|august|september|october|november|december))\b",
    re.I,
)
_TARGET_HEADING = re.compile(r"\b(goals?|targets?|objectives?|okrs?|key results|kpis?|success|metrics?|outcomes?)\b")
_BASELINE = re.compile(
    r"\b(from\s+~?\$?"
    + _NUMBER
    + r"|(?:currently|today|at present)\b[^.;]{0,40}?\d|\d[^.;]{0,40}?\b(?:today|currently)|"
    r"baseline|as of|(?:down|up) from|now (?:at|is|sits)|"
    r"(?:is|was|are|were|sits at|stands at|averages?)\s+(?:~|about |around )?\$?" + _NUMBER + r"|compared (?:to|with)|"
    r"vs\.?\s+" + _NUMBER + r"|last (?:quarter|month|year|week)|this (?:quarter|month|year))\b|→|->",
    re.I,
)
_BASELINE_HEADING = re.compile(
    r"\b(baseline|current state|current situation|today|status quo|where we are|as-is|current)\b"
)

_PEOPLE_METRIC = re.compile(
    r"\b(tickets? (?:closed|resolved|handled|per)|(?:closed|resolved|handled) tickets|issues? closed|prs? merged|"
    r"pull requests? merged|lines of code|commits? per|story points|velocity|deploy(?:s|ments)? per (?:week|day|engineer|"
    r"team|month)|calls? (?:handled|per)|handle time|handling time|time to (?:close|resolve|resolution|first response)|"
    r"(?:first )?response time|resolution time|tickets? per (?:agent|engineer|person|day|week)|close rate|utili[sz]ation|"
    r"bugs? fixed|features? shipped|cases? closed|contacts? per hour|chats? per hour)\b",
    re.I,
)
_MEASURED = re.compile(
    r"\b(targets?|goals?|quota|kpis?|okrs?|measured on|measured by|at least|minimum|no (?:more|less|fewer) than|"
    r"per (?:engineer|agent|person|developer|rep|head)|each (?:engineer|agent|person|developer|team)|under \d+|"
    r"below \d+|above \d+|over \d+|bonus|performance review|leaderboard|ranked)\b|[<>≤≥]\s*\d",
    re.I,
)
# "Hiring managers are measured on offers accepted per quarter": whatever follows is a number people are judged by.
# "half of their variable pay depends on the share of accounts moved": pay tied to a number.
_PAY_TIED = re.compile(
    r"\b(?:variable pay|bonus(?:es)?|commissions?|compensation|incentives?|performance reviews?|ratings?|promotions?)"
    r"\b[^.;]{0,40}?\b(?:depends? on|tied to|based on|linked to|pegged to|driven by|paid on|paid against)\b",
    re.I,
)
_MEASURED_ON = re.compile(
    r"\b(?:measured|judged|evaluated|assessed|reviewed|rewarded|ranked|paid|bonused) (?:on|by|for) (?:the )?"
    r"(?:number of )?[\w-]+(?: [\w-]+){0,3}? (?:per|a|each) (?:day|week|sprint|month|quarter|year|engineer|person|manager)\b",
    re.I,
)
# Said in so many words, a guardrail anywhere in the section covers its targets.
_NAMED_GUARDRAIL = re.compile(
    r"\b(guardrails?|counter-?metrics?|counter-?balanc\w*|goodhart|paired with|balanced by)\b", re.I
)
_GUARDRAIL_SECTION = re.compile(r"\b(guardrails?|counter-?metrics?|health metrics|quality)\b")
_GUARDRAIL = re.compile(
    r"\b(guardrails?|counter-?metrics?|counter-?balanc\w*|quality (?:metric|bar|score|check|review)|csat|"
    r"customer satisfaction|satisfaction|reopen(?:ed)? rate|re-?opened|defects?|escaped bugs|change failure rate|"
    r"incidents?|regressions?|balanced (?:by|with)|paired with|goodhart|while (?:keeping|maintaining|holding)|"
    r"without (?:lowering|hurting|increasing|degrading)|nps|error rate|rework|revert rate|quality|retention|churn|"
    r"still (?:paying|active|using)|so that we do not)\b",
    re.I,
)

_AUTO = re.compile(
    r"\b(auto-?retr(?:y|ies)|automatic(?:ally)? retr\w*|retr(?:y|ies|ied) (?:automatically|forever|indefinitely|until|on (?:every |each )?(?:failure|error))|"
    r"auto-?scal(?:e|es|ed|ing|er|ers)?\b(?!\s+groups?)|automatic(?:ally)? scal\w*|scales? (?:out|up) automatically|"
    r"auto-?repl(?:y|ies)|automatic(?:ally)? (?:reply|replies|respond\w*|re-?queue\w*|requeue\w*|re-?run\w*|restart\w*|"
    r"reopen\w*|escalat\w*|re-?send\w*|resend\w*|re-?tr\w*|notif\w*|email\w*|page\w*|alert\w*)|re-?queue(?:s|d)? "
    r"(?:it|them|the \w+|failed \w+)|pages? (?:the )?on-?call|(?:alerts?|alarms?) (?:that|which|will) pages?|"
    r"notif(?:y|ies|ication|ications) (?:\w+ )?(?:on|for|about) (?:every|each|any)|(?:email|message|ping|slack)s? "
    r"(?:\w+ )?(?:on|for) (?:every|each)|on every (?:event|change|commit|push|failure|error|update|message)|"
    r"(?:for|on) each (?:failure|error|event)|"
    r"on every (?:[\w-]+ ){0,2}?(?:requests?|calls?|attempts?)|"
    r"(?:every time|each time|whenever)\b[^.;]{0,120}?\b(?:e-?mails?|notifications?|notif(?:y|ied)|banners?|alerts?|"
    r"pages?|paged|messages?|sms|texts?)\b|"
    r"(?:re-?sen[dt]\w*|retr(?:y|ies|ied)|re-?tr\w*|poll\w*|re-?queue\w*|re-?submit\w*)[^.;]{0,60}?\buntil\b|"
    r"\buntil (?:it|they|the \w+) (?:is|are|gets?|has been|have been) (?:accepted|delivered|processed|acknowledged|"
    r"confirmed|approved|declined|indexed)|"
    r"(?:when|whenever|each time|every time|if) (?:a|an|any|each|every) [\w -]{1,40}? fail(?:s|ed)?,? (?:we |it |the system )?"
    r"(?:will )?(?:e-?mail|notify|notifies|page|pages|alert|alerts|message|ping|text|slack)s?)\b",
    re.I,
)
_NEGATED = re.compile(r"\b(?:not|never|no|n't|without)\s+(?:\w+\s+)?$", re.I)
_BOUND = re.compile(
    r"\b(caps?|capped|limits?|limited|max(?:imum)?|at most|up to \d+|no more than|backoff|back-off|back off|exponential|"
    r"jitter|cool-?down|cool down|dedup\w*|de-dup\w*|debounc\w*|throttl\w* (?:them|it|the (?:e-?mails?|notifications?|alerts?|retries|pages))|rate[- ]limit\w*|batch\w*|digest|"
    r"circuit[- ]breakers?|min(?:imum)? interval|once (?:per|a|an|every)|budget|quiet hours|snooze|suppress\w*|"
    r"group(?:ed|ing)|aggregat\w*|dead[- ]letter|give up|gives up|stop(?:s)? after|\d+ (?:times|attempts|retries|tries))\b",
    re.I,
)


@document_check(
    "doc-metric-no-baseline",
    tag="systems",
    severity="P2",
    summary="a target given as a change ('reduce churn by 20%', 'cut p95 in half') with no current value or baseline",
    match=[
        "# Q3 plan: onboarding\n\n## Goals\n\n- Reduce churn in the first 30 days by 20%.\n- Increase trial "
        "conversion to 5%.\n\n## Work\n\nRebuild the checklist.\n",
        "# Proposal: API latency\n\nOur goal is to cut p95 latency of /search in half by Q4.\n",
    ],
    no_match=[
        "# Q3 plan: onboarding\n\n## Goals\n\n- Reduce 30-day churn from 11% to 8.8% (-20%).\n- Increase trial "
        "conversion to 5% (currently 3.1%).\n",
        "# Proposal: API latency\n\n## Current state\n\np95 of /search is 840 ms.\n\n## Goals\n\nCut p95 latency "
        "of /search in half by Q4.\n",
        "# fluxdrive\n\nCaching reduces review time by 40% on large repositories.\n",
    ],
)
def metric_no_baseline(doc: DocModule) -> Iterator[CheckHit]:
    if _prose.kind(doc) is None:
        return
    baseline_sections = [s for s in _prose.sections(doc) if _BASELINE_HEADING.search(s.key)]
    if any(re.search(r"\d", _prose.section_text(doc, s)) for s in baseline_sections):
        return
    targets = [s for s in _prose.sections(doc) if _TARGET_HEADING.search(s.key)]
    for block in _prose.blocks(doc):
        if _prose.in_background(doc, block.line):
            continue
        framed = any(s.contains(block.line) for s in targets)
        for sentence in block.sentences():
            target = (
                _CHANGE_TARGET.search(sentence)
                or (_LEVEL_TARGET.search(sentence) if framed else None)
                or _GOAL_LEVEL.search(sentence)
            )
            if not target or not (framed or _TARGET_FRAME.search(sentence)) or _BASELINE.search(block.text):
                continue
            yield CheckHit(
                line=block.line,
                title=f'Target "{_prose.quote(target.group(0), 50)}" in "{doc.section_of(block.line)}" '
                "gives no current value or baseline",
                why="A change target without its starting point cannot be judged (is 20% ambitious or trivial?) nor "
                "checked afterwards: nobody recorded where it started.",
                fix="State the current value and when it was measured next to the target ('from 11% (June) to 8.8%'), "
                "or add a Baseline section.",
            )
            break


@document_check(
    "doc-target-no-guardrail",
    tag="systems",
    severity="P2",
    summary="a quantitative target people are measured on (tickets closed, deploys per week, handle time) with no "
    "counter-metric (Goodhart's law)",
    match=[
        "# Support team OKRs\n\n## Key results\n\n- Each agent closes at least 40 tickets per day.\n"
        "- Average handle time under 6 minutes.\n",
        "# Proposal: engineering metrics\n\n## Targets\n\nEvery team ships 10 deploys per week by March; the "
        "dashboard ranks teams weekly.\n",
    ],
    no_match=[
        "# Support team OKRs\n\n## Key results\n\n- Each agent closes at least 40 tickets per day.\n"
        "- Guardrail: CSAT stays above 90% and the reopened rate below 5%.\n",
        "# Runbook\n\nIf the tickets closed graph drops, check the queue.\n",
    ],
)
def target_no_guardrail(doc: DocModule) -> Iterator[CheckHit]:
    if _prose.kind(doc) is None and not _TARGET_HEADING.search(_prose.title(doc).lower()):
        return
    targets = [s for s in _prose.sections(doc) if _TARGET_HEADING.search(s.key)]
    for block in _prose.blocks(doc):
        metric = _PEOPLE_METRIC.search(block.text) or _MEASURED_ON.search(block.text) or _PAY_TIED.search(block.text)
        if not metric or not re.search(r"\d|\bhalf\b|\ball\b|\bpercent", block.text):
            continue
        measured = _MEASURED.search(block.text) or _PAY_TIED.search(block.text)
        if not (measured or any(s.contains(block.line) for s in targets)):
            continue
        if _prose.handled(doc, block.line, _GUARDRAIL, _GUARDRAIL_SECTION):
            continue  # the counter-metric sits beside this target, or in a Guardrails section
        section = _prose.section_for(doc, block.line)
        if section is not None and _NAMED_GUARDRAIL.search(_prose.section_text(doc, section)):
            continue  # "Guardrail: CSAT stays above 90%" as a sibling item
        yield CheckHit(
            line=block.line,
            title=f'Target on "{_prose.quote(metric.group(0), 40)}" in "{doc.section_of(block.line)}" with no '
            "guardrail or quality counter-metric",
            why="When a measure becomes a target it stops measuring (Goodhart's law): tickets get closed unresolved, "
            "deploys get split, calls get cut short, unless something measures the quality the number stands for.",
            fix="Pair the target with a counter-metric that moves the other way when it is gamed (reopen rate, CSAT, "
            "change failure rate), or measure the outcome instead of the activity.",
        )
        return


# In meeting notes and postmortems what is under these headings was decided, whatever the verb.
_DECIDED_SECTION = re.compile(r"\b(action items?|actions|next steps|follow-?ups?|decisions?|remediation)\b")


@document_check(
    "doc-unbounded-loop",
    tag="systems",
    severity="P2",
    summary="an automatic reaction (auto-retry, auto-scale, auto-reply, page or notify on every event, re-queue) with "
    "no cap, backoff, cooldown or dedup",
    match=[
        "# Design: webhook delivery\n\n## Delivery\n\nFailed deliveries are retried automatically until the "
        "customer endpoint returns 200.\n\n## Storage\n\nPostgres.\n",
        "# Proposal: build alerts\n\nWe will notify the #builds channel on every failure and page the on-call "
        "when main is red.\n",
    ],
    no_match=[
        "# Design: webhook delivery\n\n## Delivery\n\nFailed deliveries are retried automatically with exponential "
        "backoff, at most 8 times over 24 hours, then moved to a dead-letter queue.\n",
        "# README\n\nCI runs on every push.\n",
    ],
)
def unbounded_loop(doc: DocModule) -> Iterator[CheckHit]:
    if _prose.kind(doc) is None:
        return
    notes = _prose.kind(doc) == "notes"  # in meeting notes only what was decided counts, not what was said
    for block in _prose.blocks(doc):
        if _prose.in_background(doc, block.line):
            continue
        section = _prose.section_for(doc, block.line)
        decided = section is not None and bool(_DECIDED_SECTION.search(section.key))
        automatic = next(
            (
                m
                for s in block.sentences()
                if (m := _AUTO.search(s))
                and not _NEGATED.search(s[: m.start()])
                and (not notes or decided or _prose.INTENT.search(s))
            ),
            None,
        )
        # The bound belongs to this reaction: in its own paragraph or item, or the one after it.
        if automatic is None or _prose.handled(doc, block.line, _BOUND, after=1):
            continue
        yield CheckHit(
            line=block.line,
            title=f'Automatic reaction "{_prose.quote(automatic.group(0), 50)}" in "{doc.section_of(block.line)}" with '
            "no cap, backoff, cooldown or dedup",
            why="An automatic reaction with no bound can feed itself: retries pile onto a struggling service, scaling "
            "chases its own load, notifications on every event train people to ignore them.",
            fix="Bound it: a maximum count or rate, backoff with jitter, a cooldown, deduplication or batching, and "
            "what happens when the bound is hit.",
        )
        return
