"""Every number of the protocol, as typed and bounded configuration.

Each section mirrors a part of PROTOCOL.md; the defaults are the spec's
numbers. Unknown keys are errors (a typo must not silently do nothing), and
the models are frozen: settings are passed down explicitly, never mutated.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

AgentList = list[str]


class _Section(BaseModel):
    # inf and nan are not settings: "timeout_local_s = 1e400" is a typo, not "wait forever"
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


def _inside_project(value: str) -> str:
    """A directory setting must stay inside PROJECT_ROOT: relative, and no ``..`` that climbs out of it."""
    path = PurePosixPath(value.replace("\\", "/"))
    if path.is_absolute() or value.startswith("~") or ".." in path.parts:
        raise ValueError(f"{value!r} must be a path relative to the project root, without '..'")
    return value


ProjectDirectory = Annotated[str, AfterValidator(_inside_project)]

REDIS_SCHEMES = ("redis", "rediss", "unix")


def _redis_url(value: str) -> str:
    """A Redis address the client can parse: ``redis://``, ``rediss://`` (a host) or ``unix://`` (a socket path).

    Checked when the config is read, so ``redis://[::1`` or ``file:///etc/passwd`` is one ConfigError line
    naming the key, not a ValueError deep inside the Redis client mid-run. The message never quotes the
    value: it may carry a password.
    """
    try:
        parts = urlsplit(value)
        port = parts.port
        host = parts.hostname
    except ValueError as exc:  # "Invalid IPv6 URL", "Port out of range 0-65535", a port that is not a number
        raise ValueError(f"is not a URL the Redis client can parse ({exc})") from None
    if parts.scheme.lower() not in REDIS_SCHEMES:
        shown = parts.scheme or "none"
        raise ValueError(f"must be a redis://, rediss:// or unix:// URL (the scheme is {shown!r})")
    if parts.scheme.lower() == "unix":
        if not parts.path:
            raise ValueError("a unix:// URL needs the socket's path (unix:///run/redis.sock)")
        return value
    if not host:
        raise ValueError("needs a host (redis://HOST:PORT/DB)")
    if port == 0:
        raise ValueError("needs a port from 1 to 65535")
    if parts.path.strip("/") and not parts.path.strip("/").isdigit():
        raise ValueError("the database after the host must be a number (redis://HOST:PORT/0)")
    return value


RedisUrl = Annotated[str, AfterValidator(_redis_url)]


class CeilingConfig(_Section):
    """Dynamic slot ceiling (section 3): base + scope + domains, capped."""

    base: int = Field(4, ge=1, le=20, description="slots before scope and domains")
    max: int = Field(10, ge=1, le=20, description="hard cap on selected agents")
    scope_file: int = Field(0, ge=0, le=5, description="scope bonus: single file or document")
    scope_diff_small: int = Field(1, ge=0, le=5, description="scope bonus: diff below the large-diff line count")
    scope_diff_large: int = Field(2, ge=0, le=5, description="scope bonus: large diff")
    scope_directory: int = Field(3, ge=0, le=5, description="scope bonus: directory or repository")
    diff_large_lines: int = Field(500, ge=1, description="changed lines at which a diff counts as large")
    domains_one: int = Field(1, ge=0, le=5, description="bonus for one detected domain")
    domains_many: int = Field(2, ge=0, le=5, description="bonus for two or more detected domains")

    @model_validator(mode="after")
    def _base_within_max(self) -> CeilingConfig:
        if self.base > self.max:
            raise ValueError(f"base ({self.base}) must not exceed max ({self.max})")
        return self


class ScoringConfig(_Section):
    """Agent scoring (section 3): base score, bonuses, trust."""

    adjacent_share: float = Field(0.10, ge=0, le=1, description="share of content that makes base 2")
    core_share: float = Field(0.30, ge=0, le=1, description="share of content above which base is 3")
    domain_boost: int = Field(2, ge=0, le=5, description="bonus when a detected domain has criteria for the agent")
    project_bonus: int = Field(1, ge=0, le=5, description="bonus when the project has CLAUDE.md/AGENTS.md/.fluxdrive")
    domain_agent_bonus: int = Field(1, ge=0, le=5, description="bonus for a project agent of a detected domain")
    max_score: float = Field(7, gt=0, description="upper bound of the final score")
    trust_floor: float = Field(0.5, gt=0, le=1, description="lowest trust multiplier, approached after many discards")
    trust_prior_reviews: int = Field(
        10, ge=0, description="reviews' worth of assumed acceptance before feedback moves trust (the prior)"
    )
    # Settings of the old banded trust rule: accepted so older config files still load, no longer used.
    trust_min_reviews: int = Field(10, ge=1, description="unused (trust now follows trust_prior_reviews)")
    trust_high_acceptance: float = Field(0.80, ge=0, le=1, description="unused (trust now follows trust_prior_reviews)")
    trust_low_acceptance: float = Field(0.50, ge=0, le=1, description="unused (trust now follows trust_prior_reviews)")

    @model_validator(mode="after")
    def _ordered(self) -> ScoringConfig:
        if self.adjacent_share > self.core_share:
            raise ValueError("adjacent_share must not exceed core_share")
        return self


class SelectionConfig(_Section):
    """Selection and stages (section 3)."""

    thin_section_lines: int = Field(5, ge=0, description="a section with fewer prose lines is thin")
    thin_section_bullets: int = Field(3, ge=0, description="a section with fewer bullets is thin")
    stage1_ratio: float = Field(0.40, gt=0, le=1, description="share of selected slots in Stage 1 (rounded up)")
    stage1_min: int = Field(2, ge=1, description="fewest Stage 1 agents")
    stage1_max: int = Field(5, ge=1, description="most Stage 1 agents")
    expansion_pool_min_score: float = Field(2, ge=0, description="unselected agents at or above this join the pool")
    min_agents: int = Field(2, ge=1, le=10, description="fewest reviewers for any non-empty input")
    staging: Literal["auto", "always", "never"] = Field(
        "auto", description="auto: stages only when the whole roster would exceed the budget; always; never"
    )

    @model_validator(mode="after")
    def _bounds(self) -> SelectionConfig:
        if self.stage1_min > self.stage1_max:
            raise ValueError(f"stage1_min ({self.stage1_min}) must not exceed stage1_max ({self.stage1_max})")
        return self


class SlicingConfig(_Section):
    """Content routing (section 4.3)."""

    diff_min_lines: int = Field(1000, ge=1, description="diffs at least this long are sliced per agent")
    document_min_lines: int = Field(200, ge=1, description="documents at least this long are sliced")
    full_coverage_ratio: float = Field(0.80, gt=0, le=1, description="priority share above which everything is sent")
    cross_cutting: AgentList = Field(
        default_factory=lambda: ["fd-architecture", "fd-quality"],
        description="agents that always get the full content",
    )


class DispatchConfig(_Section):
    """Launch, monitoring, retries and backoff (sections 4.5-4.6)."""

    max_concurrency: int = Field(6, ge=1, le=64, description="agents in flight at once")
    timeout_local_s: float = Field(300, gt=0, description="timeout for local or fast runtimes (seconds)")
    timeout_remote_s: float = Field(600, gt=0, description="timeout for remote or slow runtimes (seconds)")
    retries: int = Field(1, ge=0, le=5, description="retries of a failed agent before its error stub")
    poll_interval_s: float = Field(0.5, gt=0, description="fallback polling interval when events are unavailable")
    backoff_base_s: float = Field(2, gt=0, description="first backoff window on 429/5xx")
    backoff_max_s: float = Field(60, gt=0, description="largest backoff window")
    backoff_factor: float = Field(2, ge=1, description="backoff window growth per attempt")
    min_concurrency: int = Field(1, ge=1, description="floor of the concurrency cap under rate limiting")
    backend: Literal["local", "ray"] = Field(
        "local", description="where agents run: local (asyncio in this process) or ray (one Ray task per agent)"
    )
    cluster: str | None = Field(
        None, description="Ray address for backend=ray: auto, HOST:PORT or ray://HOST:10001 (else RAY_ADDRESS)"
    )
    agent_cpus: float = Field(1, gt=0, le=64, description="CPUs a Ray task of an offline agent declares")
    remote_agent_cpus: float = Field(
        0.25, gt=0, le=64, description="CPUs a Ray task of a network-bound agent (llm) declares"
    )
    forward_env: list[str] = Field(
        default_factory=list,
        description="environment variables whose values Ray agent tasks get (e.g. OPENAI_BASE_URL); "
        "prefer setting provider keys on the nodes themselves",
    )
    shard_min_lines: int = Field(
        20_000, ge=1, description="on a cluster, inputs of at least this many lines are analyzed in shards"
    )
    rate_limit_url: RedisUrl | None = Field(
        None,
        description="redis://... shared by every machine of a fleet: one AIMD concurrency cap and 429 backoff "
        "per provider key instead of one per process",
    )


class ChannelConfig(_Section):
    """Where the peer-findings channel lives (section 10): the run's file, or a Redis stream across machines."""

    url: RedisUrl | None = Field(
        None,
        description="redis://HOST:PORT/DB: agents share findings through a Redis stream per run (mirrored to "
        "peer-findings.jsonl at the end); unset: the local file only",
    )
    maxlen: int = Field(100_000, ge=1_000, description="entries a run's stream keeps (XADD MAXLEN ~)")


class ResearchConfig(_Section):
    """Research dispatch between stages (section 4.7)."""

    enabled: bool = Field(True, description="run research agents between stages")
    max_agents: int = Field(2, ge=0, le=5, description="research agents per review")
    timeout_s: float = Field(60, gt=0, description="timeout per research agent (seconds)")
    search_provider: Literal["auto", "brave", "tavily", "off"] = Field(
        "auto", description="web search for research on a model: auto (the key that is set, Brave first), or off"
    )


class ReactionConfig(_Section):
    """The reaction round after the last stage: agents confirm, dispute or extend their peers' findings."""

    enabled: bool = Field(True, description="run the reaction round when the gate says it can add value")
    min_value: float = Field(
        0.2, ge=0, le=2, description="skip under this value (share of P0/P1 findings + share of files cited twice)"
    )
    budget_share: float = Field(0.25, gt=0, le=1, description="share of the run's token budget the round may spend")
    agent_tokens: int = Field(6_000, ge=0, description="estimated tokens of one reaction before its peers' text")
    max_findings_per_agent: int = Field(30, ge=1, description="peer findings shown to one reacting agent")
    max_chars_per_finding: int = Field(400, ge=40, description="characters of one peer finding's text")
    max_chars_per_agent: int = Field(12_000, ge=200, description="characters of peer findings per reacting agent")


class DropoutConfig(_Section):
    """AgentDropout (section 4.8)."""

    enabled: bool = Field(True, description="drop redundant Stage 2 candidates")
    threshold: float = Field(0.6, ge=0, le=1, description="redundancy score at which a candidate is dropped")
    weight_domain: float = Field(0.4, ge=0, le=1, description="its own domain already produced P0/P1")
    weight_adjacency: float = Field(0.3, ge=0, le=1, description="all its neighbours ran in Stage 1")
    weight_density: float = Field(0.2, ge=0, le=1, description="its neighbours produced many P0/P1")
    weight_low_trust: float = Field(0.1, ge=0, le=1, description="its trust multiplier is low")
    density_min_findings: int = Field(3, ge=1, description="neighbour P0/P1 count for the density signal")
    low_trust_below: float = Field(0.8, ge=0, le=1, description="trust below this is low (5+ discards, floor 0.5)")
    exempt: AgentList = Field(
        default_factory=lambda: ["fd-safety", "fd-correctness"],
        description="agents never dropped",
    )


class ExpansionConfig(_Section):
    """Expansion scoring (section 4.9)."""

    per_adjacent_p0: int = Field(3, ge=0, description="per P0 found by an adjacent agent")
    per_adjacent_p1: int = Field(2, ge=0, description="per P1 found by an adjacent agent")
    disagreement: int = Field(2, ge=0, description="Stage 1 agents disagree on one finding")
    domain_criteria: int = Field(1, ge=0, description="its domain injection criteria were met")
    direct_evidence: int = Field(3, ge=0, description="the input holds direct signals for its lane")
    core_triage: int = Field(1, ge=0, description="its own triage base score was core (3)")
    recommend_at: int = Field(3, ge=1, description="score at which launching is recommended")
    offer_at: int = Field(2, ge=1, description="score at which launching is offered")

    @model_validator(mode="after")
    def _ordered(self) -> ExpansionConfig:
        if self.offer_at > self.recommend_at:
            raise ValueError("offer_at must not exceed recommend_at")
        return self


class SynthesisConfig(_Section):
    """Synthesis (section 5)."""

    index_head_lines: int = Field(30, ge=5, description="lines read for an agent's index")
    dedup_max_distance: float = Field(0.3, ge=0, le=1, description="normalized Levenshtein distance for 'same issue'")
    dedup_min_shared_words: int = Field(3, ge=1, description="shared meaningful words for 'same issue'")
    confidence_high: int = Field(3, ge=1, description="agents for high confidence")
    confidence_medium: int = Field(2, ge=1, description="agents for medium confidence")
    cross_family_weight: float = Field(1.5, ge=0, description="weight of each extra model family")
    top_tier_families: AgentList = Field(
        default_factory=lambda: ["claude"],
        description="model families whose single-source P0/P1 need no verification flag",
    )
    grounding: bool = Field(
        True, description="demote a P0/P1 citing a line or quoting code that is not in the reviewed input"
    )
    measured: bool = Field(
        True, description="confidence and demotion from the precision measured in the history (eval runs, feedback)"
    )
    measured_min_judged: int = Field(
        10, ge=1, description="judged findings (eval runs, feedback) a rule's measured precision needs to count"
    )
    demote_below_precision: float = Field(
        0.3, ge=0, le=1, description="a P0/P1 whose rule's measured precision is below this drops a level (0: never)"
    )


class DomainsConfig(_Section):
    """Domain detection (section 8)."""

    weight_directories: float = Field(0.3, ge=0, le=1, description="weight of directory signals")
    weight_files: float = Field(0.2, ge=0, le=1, description="weight of file signals")
    weight_frameworks: float = Field(0.3, ge=0, le=1, description="weight of framework signals")
    weight_keywords: float = Field(0.2, ge=0, le=1, description="weight of keyword signals")
    keyword_sample_files: int = Field(50, ge=1, description="source files sampled for keywords")
    max_injected: int = Field(3, ge=1, le=11, description="domains whose criteria are injected")
    default_min_confidence: float = Field(0.3, ge=0, le=1, description="min_confidence when a domain sets none")


class KnowledgeConfig(_Section):
    """Knowledge lifecycle (section 9)."""

    enabled: bool = Field(True, description="inject, confirm, decay and compound project knowledge in reviews")
    directory: ProjectDirectory = Field(
        ".fluxdrive/knowledge", min_length=1, description="the store, relative to PROJECT_ROOT"
    )
    max_per_agent: int = Field(5, ge=0, le=20, description="entries injected per agent")
    decay_reviews: int = Field(10, ge=1, description="reviews without independent confirmation before archiving")
    compound_min_convergence: int = Field(2, ge=1, description="agents that must agree before a finding is kept")
    max_new_per_review: int = Field(5, ge=0, description="new entries one review may add")


class OutputConfig(_Section):
    """What callers read (section 11)."""

    stdout_budget_chars: int = Field(4000, ge=500, description="default console report size for a review")
    fail_on: Literal["risky", "needs-changes", "never"] = Field(
        "risky", description="verdict at or above which the exit code is 1"
    )
    allow_incomplete: bool = Field(
        False, description="an incomplete review (an agent failed or was cut off) does not make the exit code 1"
    )


class VerdictsConfig(_Section):
    """Where a review's per-agent verdict records go (section 11; Clavain interop in fluxdrive.reports.clavain)."""

    format: Literal["fluxdrive", "clavain", "both"] = Field(
        "fluxdrive",
        description="fluxdrive: OUTPUT_DIR/verdicts/ only; clavain or both: also Clavain records in "
        "PROJECT_ROOT/.clavain/verdicts/<agent>.json after synthesis (OUTPUT_DIR/verdicts/ is always written)",
    )


def _default_budgets() -> dict[str, int]:
    return {
        "plan": 150_000,
        "brainstorm": 80_000,
        "prd": 120_000,
        "spec": 150_000,
        "diff-small": 60_000,
        "diff-large": 200_000,
        "repo": 300_000,
        "other": 150_000,
    }


class BudgetConfig(_Section):
    """Token budgets per input type, soft-enforced before dispatch."""

    enforcement: Literal["soft", "off"] = Field("soft", description="warn and require --over-budget, or off")
    per_input: dict[str, int] = Field(default_factory=_default_budgets, description="token budget per input type")
    review_agent_default: int = Field(40_000, ge=0, description="estimate for a review agent with no history")
    research_agent_default: int = Field(15_000, ge=0, description="estimate for a research agent with no history")
    slicing_multiplier: float = Field(0.5, gt=0, le=1, description="estimate factor for sliced agents")
    min_agents: int = Field(2, ge=1, description="agents always kept when trimming to budget")
    max_usd: float | None = Field(
        None,
        gt=0,
        description="hard cost ceiling in US dollars (llm.prices), checked before dispatch and before every model "
        "request; --over-budget does not lift it (None: no ceiling)",
    )


class KnowledgeBaseConfig(_Section):
    """Knowledge-base maintenance (section 12)."""

    directory: ProjectDirectory = Field(
        ".fluxdrive/kb", min_length=1, description="the knowledge base, relative to PROJECT_ROOT"
    )
    swarm_concurrency: int = Field(5, ge=1, le=32, description="investigating agents in flight")


class EvalThresholds(_Section):
    """What a reviewer must reach on the eval suite to pass (``fluxdrive eval run`` / ``eval qualify``)."""

    fail_on_p0_miss: bool = Field(True, description="a P0 of the ground truth that no finding matched fails the run")
    recall_p0p1: float = Field(0.5, ge=0, le=1, description="minimum recall of the ground truth's P0/P1")
    recall: float = Field(0.0, ge=0, le=1, description="minimum recall of all ground truth")
    precision_p0p1: float = Field(0.0, ge=0, le=1, description="minimum share of reported P0/P1 that are real")
    decoys_flagged: float = Field(1.0, ge=0, le=1, description="maximum share of must_not_flag decoys hit")


class EvalConfig(_Section):
    """``fluxdrive eval``: the pass/fail gate."""

    thresholds: EvalThresholds = Field(default_factory=EvalThresholds)


class LayerRule(_Section):
    """An import the architecture check forbids: modules under ``source`` may not import ``forbidden``."""

    source: str = Field(min_length=1, description="module prefix, e.g. app.domain")
    forbidden: list[str] = Field(min_length=1, description="module prefixes it must not import")


class CheckSettings(_Section):
    """``[static.checks.<check-id>]``: turn one of fluxdrive's checks off, or set the options it declares.

    Any key besides ``enabled`` is an option of that check (bandit's per-plugin config); which keys a check
    takes, and their types, only the check knows, so the static runtime refuses the others before a review
    starts (one line, exit 2) - as it refuses a check id that no installed check has.
    """

    model_config = ConfigDict(extra="allow", frozen=True, allow_inf_nan=False)

    enabled: bool = Field(True, description="false: the check does not run")

    @property
    def options(self) -> dict[str, object]:
        """The check's options as given (every key but ``enabled``)."""
        return dict(self.model_extra or {})


class StaticConfig(_Section):
    """The offline static runtime: thresholds and noise control."""

    max_per_rule: int = Field(5, ge=1, description="a rule firing more often folds into one finding")
    exclude: list[str] = Field(
        default_factory=list,
        description="paths left out of the review (.gitignore patterns, added to .fluxdriveignore's)",
    )
    disabled_rules: list[str] = Field(
        default_factory=list, description="rule ids to skip, e.g. ruff:S101, astgrep:js-console-log"
    )
    complexity_p2: int = Field(10, ge=1, description="cyclomatic complexity above which a function is reported (P3)")
    complexity_p1: int = Field(20, ge=1, description="cyclomatic complexity above which the finding is P2 (never P1)")
    function_lines_p2: int = Field(80, ge=1, description="function length (code lines) above which it is reported (P3)")
    function_lines_p1: int = Field(200, ge=1, description="function length above which the finding is P2 (never P1)")
    max_parameters: int = Field(6, ge=1, description="parameters above which a function is flagged")
    module_lines: int = Field(1000, ge=1, description="code lines above which a module is oversized")
    max_fan_out: int = Field(20, ge=1, description="internal imports above which a module is a hub")
    max_fan_in: int = Field(30, ge=1, description="importers above which a module is a bottleneck")
    max_file_bytes: int = Field(5_000_000, ge=1, description="larger files are not analyzed (listed as skipped)")
    max_file_seconds: float = Field(
        60, gt=0, le=3600, description="longest fluxdrive's own checks spend on one file (then it is skipped, listed)"
    )
    layers: list[LayerRule] = Field(default_factory=list, description="forbidden imports between layers")
    checks: dict[str, CheckSettings] = Field(
        default_factory=dict, description="per check id: enabled = false, or the options the check declares"
    )

    @model_validator(mode="after")
    def _ordered(self) -> StaticConfig:
        if self.complexity_p2 > self.complexity_p1:
            raise ValueError("complexity_p2 must not exceed complexity_p1")
        if self.function_lines_p2 > self.function_lines_p1:
            raise ValueError("function_lines_p2 must not exceed function_lines_p1")
        return self


class ImportsConfig(_Section):
    """Other analyzers' results brought into every review as evidence (``review --import-sarif``).

    Not a privileged setting but a confined one: a project's own config may name only files inside the
    project (relative, no ``..``; a symlink out of the root is refused when the review reads it), so a
    reviewed repository cannot make fluxdrive read a file elsewhere into its reports.
    """

    sarif: list[ProjectDirectory] = Field(
        default_factory=list,
        description="SARIF 2.1.0 files (semgrep, CodeQL, bandit...) relative to the project root; "
        "--import-sarif adds more from anywhere",
    )


class ModelPrice(_Section):
    """What one model costs, in US dollars per million tokens."""

    input_per_mtok: float = Field(ge=0, description="USD per million input tokens")
    output_per_mtok: float = Field(ge=0, description="USD per million output tokens")


def _default_prices() -> dict[str, ModelPrice]:
    # List prices when this table was written; edit them in config - an unknown model costs 0, with a note.
    table = {
        "anthropic:claude-opus-4-1": (15.0, 75.0),
        "anthropic:claude-sonnet-4-5": (3.0, 15.0),
        "anthropic:claude-sonnet-4-6": (3.0, 15.0),
        "anthropic:claude-haiku-4-5": (1.0, 5.0),
        "openai:gpt-4.1": (2.0, 8.0),
        "openai:gpt-4.1-mini": (0.4, 1.6),
        "openai:gpt-4o": (2.5, 10.0),
        "openai:gpt-4o-mini": (0.15, 0.6),
    }
    return {name: ModelPrice(input_per_mtok=i, output_per_mtok=o) for name, (i, o) in table.items()}


class LlmConfig(_Section):
    """The ``llm`` runtime: which model, how long an agent may talk, what it costs."""

    model: str | None = Field(None, description="default model as provider:model, e.g. anthropic:claude-sonnet-4-6")
    max_turns: int = Field(30, ge=2, le=200, description="model requests per agent run (tool calls included)")
    max_output_tokens: int = Field(8000, ge=256, description="output tokens per model response")
    request_timeout_s: float = Field(120, gt=0, description="timeout of one HTTP request to the provider")
    http_retries: int = Field(5, ge=0, le=20, description="retries of a 429/5xx/unreachable request before failing")
    halve_after_429: int = Field(3, ge=1, description="consecutive rate-limit answers that halve the concurrency cap")
    max_file_bytes: int = Field(200_000, ge=1_000, description="largest file the read_file tool returns whole")
    tool_timeout_s: float = Field(
        20, gt=0, le=3600, description="longest one grep may search (a model's pattern may backtrack forever)"
    )
    prices: dict[str, ModelPrice] = Field(default_factory=_default_prices, description="USD per million tokens")


Tier = Literal["small", "standard", "frontier"]
Severity = Literal["P0", "P1", "P2", "P3"]


class RolesConfig(_Section):
    """Model roles (fluxdrive/data/agent-roles.yaml): the weakest model an agent may run on."""

    floor_agents: AgentList = Field(
        default_factory=lambda: ["fd-safety", "fd-correctness"],
        description="agents that never run below the floor tier",
    )
    floor: Tier = Field("standard", description="the floor tier of floor_agents: small, standard or frontier")
    floor_model: dict[str, str] = Field(
        default_factory=lambda: {"anthropic": "anthropic:claude-sonnet-4-6", "openai": "openai:gpt-4o"},
        description="per model family (anthropic, openai, ... or default): the provider:model an agent below "
        "its floor runs on instead",
    )


class ValidationConfig(_Section):
    """Cross-model validation: every P0/P1 a model wrote is checked by a model of another family."""

    enabled: bool = Field(True, description="check model-produced P0/P1 findings before synthesis")
    checker: dict[str, str] | list[str] = Field(
        default_factory=dict,
        description="checker models: per producer family ({anthropic = 'openai:gpt-4o'}), or a list where the "
        "first of another family is used",
    )
    severities: list[Severity] = Field(
        default_factory=lambda: list[Severity](["P0", "P1"]), description="the severities that are checked"
    )
    max_concurrency: int = Field(4, ge=1, le=32, description="validation calls in flight at once")
    excerpt_lines: int = Field(12, ge=0, le=200, description="lines around a cited line shown to the checker")


class EvidenceConfig(_Section):
    """Analyzer evidence: a model agent gets the offline analyzers' candidates of its lane to confirm or refute."""

    enabled: bool = Field(True, description="give model agents their lane's analyzer candidates as evidence")
    max_per_agent: int = Field(30, ge=0, le=500, description="candidates per agent (most severe first)")


class CliAgentConfig(_Section):
    """The ``cli-agent`` runtime: a coding-assistant CLI run headless per agent."""

    tool: Literal["claude", "codex", "command"] = Field("claude", description="which CLI drives the agent")
    command: str | None = Field(
        None, description="for tool=command: template with {prompt_file} {output_file} {agent} {root}"
    )
    executable: str | None = Field(None, description="path of the claude/codex executable (default: from PATH)")


class AgentRuntime(_Section):
    """Where one agent runs, overriding its definition and the command line."""

    runtime: str | None = Field(None, description="runtime name: static, llm, cli-agent")
    model: str | None = Field(None, description="provider:model for the llm runtime")


class TrustConfig(_Section):
    """Whether the reviewed project's own files may choose what runs and where traffic goes (README "Security
    model"). Set only in your own config, the environment or on the command line: a project cannot trust itself."""

    project_config: bool = Field(
        False,
        description="use the privileged settings (runtimes, models, commands, addresses, budgets) of the project's "
        ".fluxdrive/config.toml and agent definitions too (--trust-project-config)",
    )
    projects: list[str] = Field(
        default_factory=list,
        description="project roots (and everything below them) whose privileged settings are trusted",
    )


class Config(_Section):
    """The whole effective configuration."""

    ceiling: CeilingConfig = Field(default_factory=CeilingConfig)
    scoring: ScoringConfig = Field(default_factory=ScoringConfig)
    selection: SelectionConfig = Field(default_factory=SelectionConfig)
    slicing: SlicingConfig = Field(default_factory=SlicingConfig)
    dispatch: DispatchConfig = Field(default_factory=DispatchConfig)
    channel: ChannelConfig = Field(default_factory=ChannelConfig)
    research: ResearchConfig = Field(default_factory=ResearchConfig)
    reaction: ReactionConfig = Field(default_factory=ReactionConfig)
    dropout: DropoutConfig = Field(default_factory=DropoutConfig)
    expansion: ExpansionConfig = Field(default_factory=ExpansionConfig)
    synthesis: SynthesisConfig = Field(default_factory=SynthesisConfig)
    domains: DomainsConfig = Field(default_factory=DomainsConfig)
    knowledge: KnowledgeConfig = Field(default_factory=KnowledgeConfig)
    output: OutputConfig = Field(default_factory=OutputConfig)
    verdicts: VerdictsConfig = Field(default_factory=VerdictsConfig)
    budget: BudgetConfig = Field(default_factory=BudgetConfig)
    kb: KnowledgeBaseConfig = Field(default_factory=KnowledgeBaseConfig)
    static: StaticConfig = Field(default_factory=StaticConfig)
    imports: ImportsConfig = Field(default_factory=ImportsConfig)
    eval: EvalConfig = Field(default_factory=EvalConfig)
    llm: LlmConfig = Field(default_factory=LlmConfig)
    roles: RolesConfig = Field(default_factory=RolesConfig)
    validation: ValidationConfig = Field(default_factory=ValidationConfig)
    evidence: EvidenceConfig = Field(default_factory=EvidenceConfig)
    cli_agent: CliAgentConfig = Field(default_factory=CliAgentConfig)
    agents: dict[str, AgentRuntime] = Field(default_factory=dict, description="per-agent runtime and model")
    trust: TrustConfig = Field(default_factory=TrustConfig)
