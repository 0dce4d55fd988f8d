"""Document checks for plans, specs and PRDs (fd-user-product, offline).

What a careful reviewer flags in a written plan before reading for meaning:
unresolved markers, open questions nobody owns (in a plan about to be
carried out; an RFC's "Unresolved questions" are its request to its
reviewers), sections the document kind needs but lacks, requirements too
vague to test, links to files that do not exist, and, for HTTP API specs,
the usual contract gaps.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from fluxdrive.runtimes.static.checks import _prose
from fluxdrive.runtimes.static.checks.engine.document import DocModule
from fluxdrive.runtimes.static.checks.engine.registry import CheckHit, CheckSeverity, document_check

_MARKER = re.compile(r"\b(TODO|TBD|FIXME|XXX|TBA)\b|\?\?\?|\bto be (?:decided|determined|defined)\b", re.I)
_OPEN_HEADING = re.compile(r"\b(open questions?|unresolved|questions|open issues)\b", re.I)
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.*\S)")
_RESOLVED = re.compile(
    r"\(\s*[A-Z][\w&/.' -]{0,30}\)\s*[.?!]?\s*$|"  # "... slot? (Ben)", "(Design)": whoever asked or owns it
    r"@\w+|\bowner\b|\bassigned\b|\bdecided\b|\bdecision\b|\bresolved\b|\banswer(?:ed)?\b|\bdeadline\b|\bby \d{4}-\d{2}",
    re.I,
)
_VAGUE = re.compile(
    r"\b(fast|quickly|user-friendly|intuitive|robust|seamless(?:ly)?|scalable|efficient(?:ly)?|easy to use|"
    r"as needed|as appropriate|as required|and so on|if possible|where possible|etc\.?)(?=\W|$)",
    re.I,
)
_REQUIREMENT = re.compile(r"\b(must|shall|should|will|needs? to|requirement)\b", re.I)
_LINK = re.compile(r"(?<!!)\[[^\]]+\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_ENDPOINT = re.compile(r"^[ \t]*(?:#{1,6}[ \t]*)?`?(GET|POST|PUT|PATCH|DELETE)\s+(/[^\s`]*)", re.M)

KIND_WORDS = {
    "plan": ("plan", "design", "rfc", "proposal", "implementation", "migration plan", "rollout"),
    "prd": ("prd", "product requirements", "requirements document", "product spec"),
}
EXPECTED = {  # a missing rollback is doc-no-rollback's (doc_resilience.py): it knows when a plan touches data
    "plan": (
        ("testing", ("test", "verification", "qa")),
        ("security", ("security", "threat", "auth", "permission", "privacy", "signing", "signature", "encryption")),
    ),
    "prd": (
        ("success metrics", ("metric", "success", "kpi", "measure")),
        ("user flows", ("user flow", "journey", "user stor", "use case", "scenario")),
        ("scope / non-goals", ("non-goal", "out of scope", "scope")),
    ),
}


# Plans about people and organisation rather than software: no testing or security section is expected.
_ORGANISATIONAL = re.compile(
    r"\b(teams?|re-?org\w*|reorgani[sz]\w*|organi[sz]ation\w*|org|hiring|headcount|staffing|offsite|roles?|"
    r"responsibilities|on-?call rotation|process|ways of working)\b",
    re.I,
)


_PEOPLE_WORDS = re.compile(
    r"\b(teams?|engineers?|managers?|headcount|hir(?:e|es|ed|ing)|on-?call|rotations?|re-?orgs?|people|roles?|"
    r"reports? to|staff|interview\w*|recruit\w*)\b",
    re.I,
)
_SOFTWARE_WORDS = re.compile(
    r"\b(apis?|endpoints?|schemas?|deploy\w*|code|tables?|columns?|servers?|releases?|features?|requests?|queries|"
    r"migrations?|data|users?|customers?|backfill\w*|services?)\b",
    re.I,
)


def _organisational(doc: DocModule) -> bool:
    """A plan about people and organisation rather than software: the title says so, or its words do (2:1)."""
    if _ORGANISATIONAL.search(_title(doc)):
        return True
    prose = " ".join(line for _n, line in doc.prose())
    return len(_PEOPLE_WORDS.findall(prose)) >= 2 * max(1, len(_SOFTWARE_WORDS.findall(prose)))


def _title(doc: DocModule) -> str:
    titles = [h for h in doc.headings if h.level == 1]
    return titles[0].text if titles else doc.path.rsplit("/", 1)[-1]


def _kind(doc: DocModule) -> str | None:
    """plan / prd from the title (the file name only when there is no title)."""
    text = _title(doc)
    words = set(re.findall(r"[a-z]+", text.lower()))
    for kind, markers in KIND_WORDS.items():
        if any(marker in text.lower() if " " in marker else marker in words for marker in markers):
            return kind
    return None


@document_check(
    "doc-unresolved-markers",
    tag="user-product",
    severity="P2",
    summary="TODO / TBD / ??? markers left in a document under review",
    match=[
        "# Plan\n\nWe will store sessions in Redis (TBD: eviction policy).\n",
        "# Spec\n\n- Rate limit: ??? requests per minute\n",
    ],
    no_match=[
        "# Plan\n\nSessions live in Redis with an LRU eviction policy.\n",
        "# Plan\n\n```python\n# TODO in code samples is not the plan's business\n```\n",
    ],
)
def unresolved_markers(doc: DocModule) -> Iterator[CheckHit]:
    for number, line in doc.prose():
        match = _MARKER.search(line)
        if match:
            yield CheckHit(
                line=number,
                title=f"Unresolved '{match.group(0)}' in \"{doc.section_of(number)}\": {line.strip()[:80]}",
                why="An unresolved marker is a decision the document defers; reviewers cannot approve what is not yet decided.",
                fix="Decide it in the document, or move it to an Open Questions list with an owner and a date.",
            )


@document_check(
    "doc-open-questions",
    tag="user-product",
    severity="P2",
    summary="open questions without an owner or a decision",
    match=["# Plan\n\n## Open Questions\n\n- Should we shard by tenant?\n- Which queue do we use?\n"],
    no_match=[
        "# Plan\n\n## Open Questions\n\n- Should we shard by tenant? Owner: @maria, decide by 2026-12-01\n",
        "# Plan\n\n## Open questions\n\n- Do we move Basildon in Q1 or wait for their upgrade? (Ben)\n",
        "# Plan\n\n## Decisions\n\n- We shard by tenant.\n",
        "# Summary\n\nAdd `try` blocks.\n\n# Motivation\n\nLess nesting.\n\n# Drawbacks\n\nNew syntax.\n\n"
        "# Unresolved questions\n\n- Should `try` blocks allow labels?\n",
        "# RFC: rate limits\n\n## Open questions\n\n- Per key or per IP?\n",
    ],
)
def open_questions(doc: DocModule) -> Iterator[CheckHit]:
    if _prose.asks_for_comments(doc):
        return  # an RFC lists what it asks its reviewers to settle: that section is the point, not a defect
    sections = [(h, i) for i, h in enumerate(doc.headings) if _OPEN_HEADING.search(h.text)]
    for heading, index in sections:
        end = doc.headings[index + 1].line if index + 1 < len(doc.headings) else len(doc.lines) + 1
        for number in range(heading.line + 1, end):
            if doc.in_code[number - 1]:
                continue
            item = _ITEM.match(doc.lines[number - 1])
            if item and not _RESOLVED.search(item.group(1)):
                yield CheckHit(
                    line=number,
                    title=f"Open question with no owner or decision: {item.group(1)[:90]}",
                    why="A question without an owner or a decision date tends to stay open until it blocks the work.",
                    fix="Give it an owner and a decide-by date, or record the decision and move it out of Open Questions.",
                )


@document_check(
    "doc-missing-sections",
    tag="user-product",
    severity="P2",
    summary="sections a plan or PRD needs but lacks (testing, security; metrics, flows, scope)",
    match=[
        "# Migration plan\n\n## Steps\n\n1. Add the column.\n2. Backfill.\n3. Deploy the new reader.\n\n## Testing\n\nUnit tests.\n",
        "# PRD: Team invites\n\n## Problem\n\nTeams cannot invite members.\n\n## Requirements\n\n- Invite by email.\n",
    ],
    no_match=[
        "# Proposal: split the platform team in two\n\n## Why\n\nOne queue for everything.\n\n## Moves\n\nFive people.\n",
        "# Migration plan\n\n## Steps\n\nAdd the column.\n\n## Testing\n\nTests.\n\n## Security\n\nNo new data.\n",
        "# Meeting notes\n\nWe talked about invites.\n",
    ],
)
def missing_sections(doc: DocModule) -> Iterator[CheckHit]:
    kind = _kind(doc)
    if kind is None:
        return
    if kind == "plan" and _organisational(doc):
        return  # a reorganisation or hiring plan is tested by its people, not by a test suite; fd-people reads it
    headings = " | ".join(h.text.lower() for h in doc.headings)
    for section, words in EXPECTED[kind]:
        if any(word in headings for word in words):
            continue
        yield CheckHit(
            line=doc.headings[0].line if doc.headings else 1,
            title=f"The {kind} has no {section} section",
            why=f"A {kind} without {section} leaves reviewers to guess how that part will be handled; it is where incidents start.",
            fix=f"Add a '{section.title()}' section, even if it only says why it does not apply.",
        )


@document_check(
    "doc-vague-requirements",
    tag="user-product",
    severity="P3",
    summary="requirements worded too vaguely to test ('fast', 'user-friendly', 'etc.')",
    match=[
        "# PRD\n\n- The export must be fast and user-friendly.\n",
        "# Spec\n\nThe API should support JSON, XML, etc.\n",
    ],
    no_match=[
        "# PRD\n\n- The export must finish in under 5 s for 10,000 rows (p95).\n",
        "# Notes\n\nThe demo went fast.\n",
    ],
)
def vague_requirements(doc: DocModule) -> Iterator[CheckHit]:
    for number, line in doc.prose():
        if not (_REQUIREMENT.search(line) or _ITEM.match(line)):
            continue
        match = _VAGUE.search(line)
        if match and _REQUIREMENT.search(line):
            yield CheckHit(
                line=number,
                title=f"Vague requirement ('{match.group(1)}'): {line.strip()[:80]}",
                why="A requirement with no measurable criterion cannot be tested, so nobody can say when it is met.",
                fix="State the measure: a number, a limit, a list, or an example of acceptable behaviour.",
            )


@document_check(
    "doc-broken-links",
    tag="user-product",
    severity="P2",
    summary="relative links to files that do not exist",
    match=["# Plan\n\nSee [the setup guide](docs/missing.md) first.\n"],
    no_match=["# Plan\n\nSee [the setup guide](setup.md#install) and [the site](https://example.com).\n"],
)
def broken_links(doc: DocModule) -> Iterator[CheckHit]:
    for number, line in doc.prose():
        for match in _LINK.finditer(line):
            target = match.group(1).split("#", 1)[0].split("?", 1)[0]
            if not target or re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("/"):
                continue
            if not doc.exists(target):
                yield CheckHit(
                    line=number,
                    title=f"Link to {target} points at a file that does not exist",
                    why="Readers following the link hit a dead end, and the document may describe something that was renamed or never written.",
                    fix="Fix the path, or remove the link if the target no longer exists.",
                )


def _api_sections(doc: DocModule) -> list[tuple[str, str, int, str]]:
    """(method, path, line, section text) for each endpoint of an API spec."""
    found = []
    matches = list(_ENDPOINT.finditer(doc.text))
    for index, match in enumerate(matches):
        line = doc.text.count("\n", 0, match.start()) + 1
        end = matches[index + 1].start() if index + 1 < len(matches) else len(doc.text)
        found.append((match.group(1), match.group(2), line, doc.text[match.end() : end]))
    return found


@document_check(
    "doc-api-spec",
    tag="user-product",
    severity="P2",
    summary="HTTP API specs: list endpoints without pagination, DELETE returning a body, no versioning, mixed error shapes",
    match=[
        "# Orders API\n\n## GET /orders\n\nReturns all orders.\n\n## GET /orders/{id}\n\nOne order.\n",
        '# API\n\n## GET /v1/users?page=1\n\nPaged, limit 50. Content-Type: application/json\n\n## DELETE /v1/users/{id}\n\nReturns 200 with the deleted user:\n\n```json\n{"id": 1}\n```\n',
    ],
    no_match=[
        "# Orders API v1\n\nAll responses are Content-Type: application/json.\n\n## GET /v1/orders\n\nPaginated with `limit` and `cursor`.\n\n## DELETE /v1/orders/{id}\n\nReturns 204 No Content.\n",
        "# Design\n\nWe call GET on the cache first.\n",
    ],
)
def api_spec(doc: DocModule) -> Iterator[CheckHit]:
    endpoints = _api_sections(doc)
    if len(endpoints) < 2:
        return
    for method, path, line, body in endpoints:
        collection = not re.search(r"\{[^}]+\}|:\w+$", path)
        paged = re.search(r"\b(limit|page|cursor|offset|paginat)", path + body, re.I)
        if method == "GET" and collection and not paged:
            yield _api_hit(line, f"GET {path} lists a collection with no pagination", "pagination")
        if method == "DELETE" and re.search(r"\b200\b", body) and "```" in body:
            yield _api_hit(line, f"DELETE {path} returns 200 with a body", "delete-body", "P3")
    first = endpoints[0][2]
    versioned = any(re.search(r"/v\d+\b", path) for _m, path, _l, _b in endpoints)
    if not versioned and not re.search(r"\bversion", doc.text, re.I):
        yield _api_hit(first, "The API has no versioning scheme", "versioning", "P3")
    if not re.search(r"content-type|application/json", doc.text, re.I):
        yield _api_hit(first, "The API spec never states its content type", "content-type", "P3")


API_ADVICE = {
    "pagination": (
        "An unpaginated list endpoint returns everything: it slows down and times out as data grows.",
        "Add limit/cursor (or page) parameters with a maximum page size.",
    ),
    "delete-body": (
        "Clients expect 204 No Content from a delete; a body invites them to depend on it.",
        "Return 204 No Content, or document why the body is needed.",
    ),
    "versioning": (
        "Without a version in the path or a header, any breaking change breaks every client at once.",
        "Prefix paths with /v1 (or use a version header) and state the deprecation policy.",
    ),
    "content-type": (
        "Clients and servers disagree about encodings when the contract does not say.",
        "State the request and response Content-Type (e.g. application/json; charset=utf-8).",
    ),
}


def _api_hit(line: int, title: str, advice: str, severity: CheckSeverity | None = None) -> CheckHit:
    why, fix = API_ADVICE[advice]
    return CheckHit(line=line, title=title, why=why, fix=fix, severity=severity)
