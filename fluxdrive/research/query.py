"""What a research question asks, and which research agents answer it.

The reference's research mode (notes/reference-facts-appendix.md, appendix D)
classifies the question into one of seven types and scores each research
agent 3 (primary), 2 (secondary) or 0 (skip) from an affinity table;
every agent scoring 2 or more runs. A detected domain with research
directives for best-practices or framework-docs adds 1 to that agent.

The classification is by phrases, first match wins in the order of
:data:`QUERY_TYPES`: "why" and "what changed" questions are about history
and are recognised before "how does this project ..." (onboarding), which
comes before generic "how do I ..." (how-to). Deterministic: the same
question always gets the same agents.

:func:`terms` turns the question into what to search for: its content
words, their stems and a small table of engineering synonyms ("retries" ->
retry, backoff, attempt), because a project that handles retries may never
use the word the question does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

QUERY_TYPES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("what-changed", (
        r"\bwhat (?:has )?changed\b", r"\bwhen (?:did|was|were)\b", r"\bwho (?:changed|wrote|added|removed)\b",
        r"\bsince (?:v?\d|the last|last)\b", r"\bhistory of\b", r"\bchangelog\b",
    )),
    ("why-is-it", (r"\bwhy (?:is|are|does|do|did|was|were|has|have)\b", r"\bwhat is the reason\b", r"\brationale\b")),
    ("debug-context", (
        r"\b(?:error|errors|exception|traceback|crash(?:es|ed)?|fail(?:s|ed|ing|ure)?|bug|broken|flaky|hangs?)\b",
        r"\bdebug(?:ging)?\b",
    )),
    ("best-practice", (
        r"\bbest practices?\b", r"\brecommended\b", r"\bidiomatic\b", r"\bshould (?:we|i)\b",
        r"\bis it (?:ok|okay|safe|better)\b", r"\bstate of the art\b",
    )),
    ("onboarding", (
        r"\b(?:this|the|our) (?:project|repo|repository|codebase|code base|code|service|app|tool)\b",
        r"\bwhere (?:is|are|do|does)\b", r"\bhow does\b.*\bwork\b", r"\bhow is\b", r"\bhow are\b",
        r"\barchitecture\b", r"\boverview\b", r"\bentry ?point\b",
    )),
    ("how-to", (r"\bhow (?:do|can|should|would|to)\b", r"\bwhat is the (?:best )?way\b", r"\bexample of\b")),
)  # fmt: skip
DEFAULT_TYPE = "exploratory"

# appendix D: query type -> agent -> 3 primary / 2 secondary (absent: 0, skip)
AFFINITY: Mapping[str, Mapping[str, int]] = {
    "onboarding": {"repo-research": 3, "learnings": 2, "framework-docs": 2},
    "how-to": {"best-practices": 3, "framework-docs": 3, "learnings": 2},
    "why-is-it": {"git-history": 3, "repo-research": 3, "learnings": 2},
    "what-changed": {"git-history": 3, "repo-research": 2},
    "best-practice": {"best-practices": 3, "framework-docs": 2, "learnings": 2},
    "debug-context": {"learnings": 3, "git-history": 3, "repo-research": 2, "framework-docs": 2},
    "exploratory": {"repo-research": 3, "best-practices": 3, "git-history": 2, "framework-docs": 2, "learnings": 2},
}
LAUNCH_SCORE = 2
DIRECTIVE_AGENTS = ("best-practices", "framework-docs")

_STOPWORD_TEXT = (
    "a about above after again all am an and any app application are as at base be been before being "
    "below best between both but by can change changed changes code codebase could deal deals did do "
    "does doing done during each else few for from further get gets had handle handled handles handling "
    "happen happened happens has have having he her here hers how i idiomatic if implement implemented "
    "implements in into is it its itself just make makes me more most my no nor not now of off on once "
    "only or other our ours out over own practice practices project recommended repo repository same "
    "service she should since so some such system than that the their them then there these they thing "
    "things this those through to too tool under until up use used uses using very was way ways we were "
    "what when where which while who whom why will with work works would you your"
)
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
# Engineering words a question uses and the words the code uses instead.
SYNONYMS: Mapping[str, tuple[str, ...]] = {
    "retry": (
        "retry",
        "retries",
        "retried",
        "retrying",
        "backoff",
        "back_off",
        "attempt",
        "attempts",
        "tenacity",
        "max_retries",
        "requeue",
    ),
    "timeout": ("timeout", "timeouts", "deadline", "timed_out", "wait_for"),
    "auth": (
        "auth",
        "authenticate",
        "authentication",
        "authorize",
        "authorization",
        "login",
        "token",
        "session",
        "credential",
        "credentials",
        "permission",
        "permissions",
    ),
    "cache": ("cache", "cached", "caching", "lru_cache", "memoize", "memo", "ttl"),
    "log": ("log", "logs", "logging", "logger", "structlog"),
    "config": ("config", "configuration", "settings", "setting", "env", "environ", "toml", "yaml"),
    "error": ("error", "errors", "exception", "exceptions", "raise", "except", "failure", "fail"),
    "rate": ("rate", "ratelimit", "rate_limit", "throttle", "throttling", "429", "limiter"),
    "concurrency": ("concurrency", "concurrent", "parallel", "semaphore", "thread", "threads", "asyncio", "lock"),
    "test": ("test", "tests", "testing", "pytest", "fixture", "fixtures"),
    "secret": ("secret", "secrets", "api_key", "apikey", "token", "password", "mask", "masking", "redact"),
    "database": ("database", "db", "sqlite", "postgres", "sql", "query", "queries", "migration", "migrations"),
    "deploy": ("deploy", "deployment", "release", "ci", "pipeline", "workflow"),
    "validate": ("validate", "validation", "validator", "schema", "pydantic"),
}
_ALIASES = {
    "retries": "retry", "retrying": "retry", "retried": "retry", "backoff": "retry", "timeouts": "timeout",
    "authentication": "auth", "authorization": "auth", "login": "auth", "caching": "cache", "cached": "cache",
    "logging": "log", "logger": "log", "configuration": "config", "settings": "config", "errors": "error",
    "exceptions": "error", "exception": "error", "failures": "error", "throttling": "rate", "limits": "rate",
    "limit": "rate", "ratelimit": "rate", "parallelism": "concurrency", "threads": "concurrency",
    "tests": "test", "testing": "test", "secrets": "secret", "credentials": "secret", "keys": "secret",
    "databases": "database", "db": "database", "migrations": "database", "deployment": "deploy",
    "releases": "deploy", "validation": "validate", "validating": "validate",
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class AgentChoice:
    """One research agent's score for a question, and why."""

    agent: str
    score: int
    reason: str

    @property
    def launched(self) -> bool:
        return self.score >= LAUNCH_SCORE


def query_type(question: str) -> tuple[str, str]:
    """(type, the phrase that decided it); ``exploratory`` when nothing matched."""
    text = " ".join(question.lower().split())
    for kind, patterns in QUERY_TYPES:
        for pattern in patterns:
            found = re.search(pattern, text)
            if found:
                return kind, found.group(0)
    return DEFAULT_TYPE, ""


def choose_agents(
    question: str, available: Sequence[str], directives: Mapping[str, Sequence[str]] | None = None
) -> tuple[str, list[AgentChoice]]:
    """The question's type and every available research agent's score (launch at >= 2), best first.

    ``directives`` maps a detected domain to the research agents it has
    directives for (+1 for best-practices / framework-docs). Project research
    agents not in the table score 2 on exploratory questions, else 0.
    """
    kind, phrase = query_type(question)
    table = AFFINITY[kind]
    why = f'{kind} question ("{phrase}")' if phrase else f"{kind} question (no type phrase matched)"
    boosted = {a for agents in (directives or {}).values() for a in agents if a in DIRECTIVE_AGENTS}
    choices = []
    for agent in available:
        score = table.get(agent, 2 if kind == DEFAULT_TYPE and agent not in AFFINITY[DEFAULT_TYPE] else 0)
        reason = f"{'primary' if score == 3 else 'secondary' if score == 2 else 'skip'} for this {why}"
        if agent in boosted and score:
            score = min(3, score + 1)
            reason += "; +1: a detected domain has research directives for it"
        choices.append(AgentChoice(agent, score, reason))
    choices.sort(key=lambda c: (-c.score, c.agent))
    return kind, choices


def _stem(word: str) -> str:
    for suffix, replacement in (("ies", "y"), ("ying", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + replacement
    return word


def terms(question: str) -> tuple[str, ...]:
    """What to search the project for: content words, stems and synonyms, most specific first."""
    words = [w for w in re.findall(r"[a-z0-9_][a-z0-9_.-]*[a-z0-9_]|[a-z0-9]", question.lower())]
    found: dict[str, None] = {}
    for word in words:
        if word in _STOPWORDS or len(word) < 3:
            continue
        found.setdefault(word, None)
        stem = _stem(word)
        if len(stem) >= 3:
            found.setdefault(stem, None)
        concept = _ALIASES.get(word) or _ALIASES.get(stem) or (word if word in SYNONYMS else stem)
        for synonym in SYNONYMS.get(concept, ()):
            found.setdefault(synonym, None)
    return tuple(found)
