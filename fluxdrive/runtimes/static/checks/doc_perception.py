"""Document checks for perception (fd-perception, offline).

What a reader outside the author's head trips over: acronyms nobody
defined, one concept spelled two ways, requirements hedged until they
cannot be tested, and claims presented as what everyone already knows.
The acronym and term checks read any document (with a generous list of
acronyms every technical reader knows); the others need a requirements
section or a plan.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator

from fluxdrive.runtimes.static.checks import _prose
from fluxdrive.runtimes.static.checks.engine.document import DocModule
from fluxdrive.runtimes.static.checks.engine.registry import CheckHit, document_check

# Acronyms a technical reader knows without a definition, and capitalised words used for emphasis.
_KNOWN = """
    AI API APIS ASAP ASCII AWS BSD CD CDN CEO CFO CI CLI COO CPU CPO CSS CSV CTO CVE CWE DB DNS DOM EU FAQ FIXME GB GDPR
    GCP GIF GNU GPL GPU GUI HR HTML HTTP HTTPS ID IDE IDS IO IOS IP IPS ISO IT JPEG JPG JS JSON JWT KB KPI KPIS LLM LLMS
    MB MFA MIT ML MVP NB NPM OK OKR OKRS OS PDF PHP PM PNG PR PRS PS QA RAM REST ROI RPC SAML SDK SDKS SHA SMS SQL SSD
    SSH SSL SSO SVG TB TBD TCP TLS TODO TS UDP UI UK UN URI URL URLS US USA USB UTC UTF UUID UX VM VMS VP VPN WWW XML
    YAML TOML ETA EOD EOW EOM FYI AKA IMO TL DR TLDR README RFC RFCS ADR ADRS PRD PRDS Q1 Q2 Q3 Q4 AM GMT BST CET PST
    EST PDT EDT ET PT UAT SEO SAAS B2B B2C CRM ERP HQ IPO LLC LTD INC PLC NDA SOC SOX HIPAA PCI DSS ISO OWASP XSS CSRF
    SSRF XXE RCE SQLI DDOS DOS MD SHA MD5 RSA AES HMAC TOTP OTP CORS CSP HSTS CLIS GITHUB PYPI IETF W3C ECMA NIST
    MUST SHALL SHOULD MAY NOT REQUIRED RECOMMENDED OPTIONAL NOTE WARNING IMPORTANT CAUTION TIP DANGER INFO ALL ANY AND
    OR NO YES ON OFF IN OUT TO IS BE WE MY IF THE FOR BUT NOW DO GO SO UP AT BY OF AS AN NEW ONLY NEVER ALWAYS DONE WIP
    GET POST PUT PATCH DELETE HEAD DEBUG ERROR WARN TRACE FATAL TRUE FALSE NULL NONE SELECT INSERT UPDATE WHERE FROM
    JOIN EOF LGTM WFH OOO PTO AFAIK DRI RACI SLA SLAS STOP WAIT THIS WILL CAN CANNOT WHY HOW WHAT WHEN NEXT LAST
    CRLF LF CR LDAP PEP FIFO LIFO LRU TTL RPS QPS EOL OOM CRUD ORM MVC RSS CMS SPA PWA SMTP IMAP FTP SFTP NFS LAN WAN
    VPC IAM ACL ACLS RBAC ABAC JVM JDK TTY PID UID GID ENV WASM GC TBC TBA AZ AZS AMI AMIS ASG ELB ALB NLB EKS ECS
    RDS SQS SNS KMS EFS EBS CDK CNAME ARM AMD CNCF HA LB CRD CRDS HCL DST NPC HUD FPS RPG TUI ECB CBC GCM PRNG RNG
    SRE SRES DEVOPS SKU SKUS DDL DML GA EUR USD GBP JPY CHF CAD AUD INR CNY YOY QOQ MOM ARR MRR H1 H2 FY EOY NYC SF LA
    """
KNOWN_ACRONYMS = frozenset(_KNOWN.split())
_ACRONYM = re.compile(r"(?<![\w./$#@-])([A-Z]{2,6})(s?)(?![\w/@-]|\.[A-Za-z0-9])")
_ROMAN = re.compile(r"^(?:X{0,3})(?:IX|IV|V?I{0,3})$")
_GLOSSARY = re.compile(r"\b(glossary|definitions|terminology|terms|abbreviations|acronyms|vocabulary)\b")

# Spelling variants that mean the same thing when written as two words (nouns only: "sign in" the verb is fine).
_SPACED = {
    "dataset": "data set",
    "database": "data base",
    "codebase": "code base",
    "timestamp": "time stamp",
    "website": "web site",
    "webhook": "web hook",
    "username": "user name",
    "filename": "file name",
    "frontend": "front end",
    "backend": "back end",
}
_HOMOGRAPHS = frozenset(
    {
        "re-sign",
        "re-cover",
        "re-creation",
        "re-lease",
        "re-press",
        "re-form",
        "re-mark",
        "re-serve",
        "re-sort",
        "re-treat",
        "co-op",
        "re-count",
        "re-collect",
        "re-present",
        "re-solve",
    }
)
_HEDGE = re.compile(
    r"\b(should|might|may|could|possibly|ideally|maybe|perhaps|hopefully|if possible|where possible|"
    r"as much as possible|try to|probably|preferably|nice to have)\b",
    re.I,
)
_STRONG_HEDGE = re.compile(
    r"\b(might|could|possibly|ideally|maybe|perhaps|hopefully|if possible|try to|probably)\b", re.I
)
# A heading that names a requirements section ("Requirements", "Functional requirements", "Requirements for X",
# "Duties and constraints", "Scope"), not one that merely contains the word ("Reborrow constraints" names a topic
# in two words at most, "An aside: explicit WF requirements on types" does not; "Traits in scope" is a rule).
_REQUIREMENTS_HEADING = re.compile(
    r"^(?:\S+\s+){0,2}?(requirements?|acceptance criteria|must[- ]haves?|success criteria|definition of done|"
    r"constraints|specification)\b|^(in scope|scope|functional|non-functional)\b"
)
_HEADING_PARTS = re.compile(r",\s*(?:and\s+)?|\s+(?:and|&)\s+|\s*/\s*")
# A sentence that describes rather than requires: an example, an alternative, an aside in parentheses ...
_ASIDE = re.compile(r"\b(for example|for instance|e\.g\.|i\.e\.|alternatively|otherwise)\b|\(", re.I)
# ... or a hedge inside a subordinate clause ("since it might", "the possibility that C++ may", "some of which may").
_SUBORDINATE = re.compile(
    r"\b(if|when|whenever|whether|since|because|although|though|while|which|that|unless|so|where|how|what|why)\b",
    re.I,
)
# ... and, for might / could / may and the like (not "should": "we should create a team" is a plan), a person or a
# pronoun as the one who might: "you might wonder", "one could access", "there could be", "it might be possible".
_SPECULATING = re.compile(
    r"\b(you|one|we|i|they|someone|anyone|no one|nobody|people|readers?|there|this|it|these|those)\W*$", re.I
)
_NARRATING = re.compile(r"^\W*(not|never|n't|have|had)\b", re.I)  # "could not predict", "might have been"
_NEGATED = re.compile(r"\b(not|never|no)\s+$", re.I)  # "does not try to": no hedge at all
_CLAUSE_START = re.compile(r".*(?:(?<!e\.g)(?<!i\.e)[.!?;:]\s|^)", re.S)
_QUESTION = re.compile(r"^[^.!]*\?")  # the sentence goes on to a question mark: it asks, it does not require
_NOT_REQUIREMENTS = re.compile(r"\b(out of scope|non-goals?|nice to have|future|open questions?|maybe later|stretch)\b")
_REQUIREMENT_ID = re.compile(r"^\s*(?:[-*]\s+)?\**(?:R|REQ|FR|NFR|AC)[-\s]?\d+\b")
_RFC2119 = re.compile(r"\b(RFC\s?2119|RFC\s?8174|BCP\s?14)\b")
_PERMISSION = re.compile(
    r"\b(users?|customers?|admins?|administrators?|clients?|callers?|you|they|members?)\s+may\b", re.I
)
_ASSUMED = re.compile(
    r"(?:^|[.!?:]\s+|\(\s*)(?P<a>(?:obviously|clearly|of course),?)\s"
    r"|\b(?P<b>(?:is|are|was|were|will be|it's|that's) (?:obviously|clearly))\b"
    r"|\b(?P<c>as (?:everyone|everybody|we all|you all) knows?|it goes without saying|needless to say|"
    r"everyone knows (?:that)?|as is well known|it is well known)\b",
    re.I,
)
_JUST = re.compile(
    r"\b(?:just|simply)\s+(?:add|run|change|update|migrate|copy|move|switch|replace|rewrite|delete|drop|deploy|flip|"
    r"point|rename|re-?run|restart|merge|call|turn|set|swap|remove|upgrade|convert|import|export|backfill|"
    r"reindex|re-index|patch|bump|toggle|enable|disable|cut over|redirect)\b",
    re.I,
)
_STEPS_HEADING = re.compile(
    r"\b(steps?|plan|rollout|roll-out|migration|cutover|implementation|execution|phases?|how)\b"
)


def _shouted(text: str, match: re.Match[str]) -> bool:
    """An all-caps word next to another one: emphasis ('DO NOT'), not an acronym."""
    before = text[: match.start()].rstrip()
    after = text[match.end() :].lstrip()
    return bool(re.search(r"\b[A-Z]{2,}$", before) or re.match(r"[A-Z]{2,}\b", after))


def _definitions(doc: DocModule) -> dict[str, list[tuple[int, str]]]:
    """Acronym -> (line, expansion) for every 'Long Form (LF)', 'LF (long form)', 'LF: long form' and glossary entry."""
    found: dict[str, list[tuple[int, str]]] = {}
    glossary = [s for s in _prose.sections(doc) if _GLOSSARY.search(s.key)]
    for number, text in _prose.prose_lines(doc):
        for match in re.finditer(r"\(([A-Z]{2,6})s?\)", text):
            acronym = match.group(1)
            before = re.findall(r"[A-Za-z][\w-]*", text[: match.start()])
            expansion = _expansion_before(before, acronym)
            found.setdefault(acronym, []).append((number, expansion))
        for match in re.finditer(r"\b([A-Z]{2,6})s?\s*\(([a-zA-Z][^)]{2,60})\)", text):
            found.setdefault(match.group(1), []).append((number, _first_words(match.group(2), match.group(1))))
        for match in re.finditer(
            r"\b([A-Z]{2,6})\*{0,2}\s*(?::|—|–|=| - |,? or | stands for | means )\s*\*{0,2}([A-Za-z][^.;:]{2,60})", text
        ):
            in_glossary = any(s.contains(number) for s in glossary)
            if (
                in_glossary
                or re.match(r"^\s*(?:[-*]|\|)?\s*\**" + match.group(1), text)
                or "stands for" in match.group(0)
            ):
                found.setdefault(match.group(1), []).append((number, _first_words(match.group(2), match.group(1))))
    return found


def _expansion_before(before: list[str], acronym: str) -> str:
    """The words before '(ACR)' whose initials spell it ('' when they do not)."""
    letters = acronym.lower()
    for size in range(len(letters), len(letters) + 4):
        candidate = before[-size:]
        initials = "".join(
            w[0].lower() for w in candidate if w.lower() not in ("of", "and", "for", "the", "to", "a", "in")
        )
        if initials == letters or "".join(p[0] for w in candidate for p in w.lower().split("-")) == letters:
            return " ".join(candidate)
    return ""


def _first_words(text: str, acronym: str) -> str:
    words = re.findall(r"[A-Za-z][\w-]*", text)
    for size in range(len(acronym), len(acronym) + 4):
        if len(words) >= size and _expansion_before(words[:size], acronym):
            return " ".join(words[:size])
    return ""


@document_check(
    "doc-undefined-acronym",
    tag="perception",
    severity="P3",
    summary="an acronym used without being spelled out on first use or in a glossary (P2 when used 3+ times)",
    match=[
        "# Design: alerting\n\n## Goals\n\nMeet the SLO for checkout. Each SLO breach pages the owner, and the SLO "
        "dashboard shows the budget.\n\n## Non-goals\n\nLogging.\n",
        "# Incident review\n\nThe DLQ filled up overnight.\n",
    ],
    no_match=[
        "# Design: alerting\n\nWe meet the Service Level Objective (SLO) for checkout; each SLO breach pages the owner.\n",
        "# Design\n\n## Glossary\n\n- **DLQ**: dead-letter queue\n\n## Flow\n\nFailed messages go to the DLQ.\n",
        "# Setup\n\nCall the API over HTTPS and read the JSON. Set `MAX_RETRY` in the `ENV` file.\n\n## FAQ\n\nNOTE: "
        "you MUST restart.\n",
    ],
)
def undefined_acronym(doc: DocModule) -> Iterator[CheckHit]:
    defined = _definitions(doc)
    uses: dict[str, list[int]] = {}
    for number, text in _prose.prose_lines(doc):
        if re.search(r"[a-z]", text) is None:
            continue  # a shouted line or a table rule
        for match in _ACRONYM.finditer(text):
            acronym = match.group(1)
            if acronym in KNOWN_ACRONYMS or _ROMAN.match(acronym) or _shouted(text, match):
                continue
            uses.setdefault(acronym, []).append(number)
    plain = {w for _n, text in _prose.prose_lines(doc) for w in re.findall(r"(?<![\w-])[a-z]{2,6}(?![\w-])", text)}
    for acronym, lines in sorted(uses.items(), key=lambda item: item[1][0]):
        if acronym in defined or acronym.lower() in plain:
            continue  # defined, or a word written in capitals for emphasis ("never a silent SAFE")
        count = len(lines)
        yield CheckHit(
            line=lines[0],
            title=f'"{acronym}" is never spelled out (first use in "{doc.section_of(lines[0])}", used {count}×)',
            why="Readers outside the team stop at an acronym they do not know, or guess a different meaning; "
            "the author is the only one who does not notice.",
            fix=f"Spell it out on first use ('Long Form ({acronym})') or add it to a Glossary section.",
            severity="P2" if count >= 3 else None,
        )


def _identifiers(doc: DocModule) -> set[str]:
    """Lower-case words that appear in code (spans or fences): names of commands and symbols, spelled on purpose."""
    code = [m.group(0) for m in re.finditer(r"(`+)(?:(?!\1).)+\1", doc.text)]
    code += [line for line, fenced in zip(doc.lines, doc.in_code, strict=True) if fenced]
    return set(re.findall(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*", " ".join(code).lower()))


def _variants(doc: DocModule) -> list[tuple[str, str, int, int, int]]:
    """(form a, form b, count a, count b, first line of the rarer form) for terms spelled two ways.

    A form that also appears in code is a name (a command, a package), spelled that way on purpose.
    """
    names = _identifiers(doc)
    forms: Counter[str] = Counter()
    first: dict[str, int] = {}
    cased: dict[str, Counter[str]] = {}
    for number, text in _prose.prose_lines(doc):
        lower = text.lower()
        for token in re.findall(
            r"(?<![\w/.-])[a-z][a-z0-9]+(?:-[a-z0-9]+)+(?![\w/-])|(?<![\w/.-])[a-z][a-z0-9]+(?![\w/-])", lower
        ):
            forms[token] += 1
            first.setdefault(token, number)
        for spaced in _SPACED.values():
            count = len(re.findall(rf"\b{spaced}\b", lower))
            if count:
                forms[spaced] += count
                first.setdefault(spaced, number)
        for token in re.findall(
            r"(?<![\w/.@-])[A-Za-z]+[A-Z][a-z][A-Za-z]*(?![\w/-])|(?<![\w/.@-])[A-Z][a-z]+(?![\w/-])", text
        ):
            cased.setdefault(token.lower(), Counter())[token] += 1
            first.setdefault(token, number)
    found: list[tuple[str, str, int, int, int]] = []
    for form, count in forms.items():
        if "-" not in form or form.count("-") > 1 or form in _HOMOGRAPHS:
            continue
        joined = form.replace("-", "")
        if forms.get(joined) and len(joined) >= 5 and not {form, joined} & names:
            found.append(_pair(form, joined, count, forms[joined], first))
    for joined, spaced in _SPACED.items():
        if forms.get(joined) and forms.get(spaced):
            found.append(_pair(joined, spaced, forms[joined], forms[spaced], first))
    for spellings in cased.values():
        camel = [s for s in spellings if re.search(r"[a-z][A-Z]", s)]
        if camel and len(spellings) >= 2:
            a, b = sorted(spellings, key=lambda s: -spellings[s])[:2]
            if re.search(r"[a-z][A-Z]", a + b) and not (a.istitle() and b.islower()):
                found.append(_pair(a, b, spellings[a], spellings[b], first))
    return found


def _pair(a: str, b: str, count_a: int, count_b: int, first: dict[str, int]) -> tuple[str, str, int, int, int]:
    rarer = b if count_b <= count_a else a
    return (a, b, count_a, count_b, first[rarer])


@document_check(
    "doc-inconsistent-terms",
    tag="perception",
    severity="P3",
    summary="one concept named two ways: an acronym expanded differently, or a term spelled with and without a hyphen, "
    "space or internal capital",
    match=[
        "# Design: login\n\n## Flow\n\nThe sign-in page posts to the auth service. After signin the user lands "
        "on the dashboard.\n",
        "# RFC: reliability\n\nWe track the Service Level Objective (SLO) weekly.\n\n## Alerts\n\nAn alert fires when "
        "the System Latency Objective (SLO) is at risk.\n",
        "# Plan\n\nThe dataset is exported nightly; the data set is 40 GB.\n",
        "# Notes\n\nGitHub Actions runs the tests. When Github is down, deploys wait.\n",
    ],
    no_match=[
        "# Guide\n\nSign in with your account. The sign-in page is at /login.\n",
        "# Design: login\n\nThe sign-in page posts to the auth service; after sign-in the user sees the dashboard.\n",
        "# Notes\n\nGitHub runs the tests on every push; see github.com/acme/app for the workflow.\n",
    ],
)
def inconsistent_terms(doc: DocModule) -> Iterator[CheckHit]:
    for acronym, definitions in sorted(_definitions(doc).items()):
        expansions: dict[str, int] = {}
        for line, expansion in definitions:
            key = re.sub(r"[^a-z]", "", expansion.lower()).rstrip("s")
            if key and key not in expansions:
                expansions[key] = line
        if len(expansions) >= 2:
            (_a, first), (_b, second) = list(expansions.items())[:2]
            named = [e for _l, e in definitions if e]
            yield CheckHit(
                line=second,
                title=f'"{acronym}" is expanded two ways: "{named[0]}" (line {first}) and "{named[-1]}" (line {second})',
                why="Two expansions of one acronym make readers wonder whether there are two things, or which one the "
                "author means in the rest of the document.",
                fix=f"Pick one expansion of {acronym} and use it everywhere.",
            )
    for a, b, count_a, count_b, line in sorted(_variants(doc), key=lambda v: v[4]):
        yield CheckHit(
            line=line,
            title=f'The same term is written two ways: "{a}" ({count_a}×) and "{b}" ({count_b}×)',
            why="Readers take two spellings for two things (and search finds only one of them).",
            fix=f'Pick one spelling ("{a if count_a >= count_b else b}") and use it throughout.',
        )


def _requirement_sections(doc: DocModule) -> list[_prose.Section]:
    return [
        s
        for s in _prose.sections(doc)
        if any(_REQUIREMENTS_HEADING.search(part) for part in _HEADING_PARTS.split(s.key))
        and not _NOT_REQUIREMENTS.search(s.key)
    ]


def _describes(before: str, word: str, after: str) -> bool:
    """True when a hedge sits in a sentence that describes (what could happen, what someone might think).

    ``before`` is its sentence up to the hedge (from the start of its paragraph or list item), ``after`` the
    rest of its line. A requirement states what the system does: "The service could return 404".
    """
    sentence = _CLAUSE_START.sub("", before, count=1)
    clause = sentence.rsplit(",", 1)[-1]  # "When used in an ABI, it should ...": the main clause follows the comma
    if _ASIDE.search(sentence) or _SUBORDINATE.search(clause) or _NEGATED.search(clause) or _QUESTION.match(after):
        return True
    if word.lower() == "should":
        return False
    return bool(_SPECULATING.search(clause) or _NARRATING.match(after))


def _paragraph_starts(doc: DocModule) -> dict[int, int]:
    """The first line of the paragraph or list item each prose line belongs to."""
    return {n: block.line for block in _prose.blocks(doc) for n in range(block.line, block.end + 1)}


@document_check(
    "doc-hedged-requirements",
    tag="perception",
    severity="P2",
    summary="hedged requirements (might, could, ideally, maybe, should) in a requirements or acceptance-criteria "
    "section: nobody can test them",
    match=[
        "# PRD: exports\n\n## Requirements\n\n1. Exports might include archived projects.\n2. The file should ideally "
        "open in Excel.\n\n## Out of scope\n\n- PDF, maybe later.\n",
        "# Spec\n\n- R1: The importer could retry failed rows.\n",
        "# Orders API spec\n\n## Requirements\n\n- The service could return 404 for an order that is archived.\n",
    ],
    no_match=[
        "# IDE support\n\n## Requirements\n\nThe server must be safe under concurrent requests. For example, "
        "several builds could\noverlap. There could be multiple clients, and you might wonder why.\n",
        "# Projections\n\n## An aside: explicit WF requirements on types\n\nThe bound might be quite remote.\n",
        "# PRD: exports\n\n## Requirements\n\n1. Exports include archived projects.\n2. The file opens in Excel 2019 "
        "and later.\n\n## Out of scope\n\n- PDF, maybe later.\n",
        "# API spec\n\nThe key words MUST and SHOULD are to be interpreted as described in RFC 2119.\n\n"
        "## Requirements\n\n- Clients SHOULD send an Idempotency-Key header.\n- Users may cancel at any time.\n",
    ],
)
def hedged_requirements(doc: DocModule) -> Iterator[CheckHit]:
    rfc2119 = bool(_RFC2119.search(doc.text))
    excluded = [s for s in _prose.sections(doc) if _NOT_REQUIREMENTS.search(s.key)]
    wanted = _requirement_sections(doc)
    texts = dict(_prose.prose_lines(doc))
    starts = _paragraph_starts(doc)
    for number, text in texts.items():
        if any(s.contains(number) for s in excluded):
            continue
        raw = doc.lines[number - 1]
        in_section = next((s for s in wanted if s.contains(number)), None)
        if in_section is None and not _REQUIREMENT_ID.match(raw):
            continue
        earlier = " ".join(texts.get(n, "") for n in range(starts.get(number, number), number))
        item = _prose.ITEM.match(text)
        offset = item.start(1) if item else 0  # the sentence starts after the list marker
        for match in _HEDGE.finditer(text):
            word = match.group(0)
            if rfc2119 and word.isupper():
                continue
            if word.lower() == "may" and _PERMISSION.search(text[: match.end()]):
                continue
            before = f"{earlier} {text[offset : max(offset, match.start())]}"
            if _describes(before, word, text[match.end() :]):
                continue
            where = f'"{in_section.heading.text}"' if in_section else "a numbered requirement"
            yield CheckHit(
                line=number,
                title=f'Hedged requirement ("{word}") in {where}: {_prose.quote(text.strip(" -*"), 70)}',
                why="A requirement that only might, could or should hold cannot fail a test, so nobody can say "
                "whether it was met; implementers read it as optional.",
                fix="Decide: state it as a requirement ('must', with a measure), or move it to a 'Nice to have' list.",
                severity=None if _STRONG_HEDGE.fullmatch(word) else "P3",
            )
            break


@document_check(
    "doc-unstated-assumptions",
    tag="perception",
    severity="P3",
    summary="claims presented as shared knowledge ('obviously', 'as everyone knows', 'just migrate') instead of stated",
    match=[
        "# Migration plan\n\n## Steps\n\n1. Just backfill the new column from the old one.\n2. Deploy.\n",
        "# Design: cache\n\nObviously, the cache can be rebuilt from the database at any time.\n",
    ],
    no_match=[
        "# Design: cache\n\nThe cache can be rebuilt from the database in about 20 minutes (measured 2026-03).\n",
        "# Guide\n\nLabel each field clearly. Just run `make` to build.\n\n> Of course, said nobody.\n",
    ],
)
def unstated_assumptions(doc: DocModule) -> Iterator[CheckHit]:
    kind = _prose.kind(doc)
    steps = [s for s in _prose.sections(doc) if _STEPS_HEADING.search(s.key)]
    for number, line in _prose.prose_lines(doc):
        text = re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", line)
        match = _ASSUMED.search(text)
        groups = ("a", "b", "c") if kind is not None else ("a", "c")  # "is clearly worse" in a guide is a description
        phrase = next((g for g in (match.group(n) for n in groups) if g), "") if match else ""
        if not phrase and kind in ("plan", "adr", "prd"):
            step = _prose.ITEM.match(doc.lines[number - 1]) and (
                any(s.contains(number) for s in steps) or kind == "plan"
            )
            just = _JUST.search(text) if step else None
            phrase = just.group(0) if just else ""
        if phrase:
            sentence = next((s for s in _prose.split_sentences(text) if phrase in s), text)
            yield CheckHit(
                line=number,
                title=f'"{phrase.rstrip(",")}" in "{doc.section_of(number)}" presents a claim as shared knowledge: '
                f"{_prose.quote(sentence.strip(' -*'), 60)}",
                why="What is obvious to the author is the step a reviewer most needs to see; words like these "
                "discourage the question that would expose the assumption.",
                fix="State the assumption and its evidence (or the effort involved), or drop the word.",
            )
