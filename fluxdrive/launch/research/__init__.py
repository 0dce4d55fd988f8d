"""Research between review stages: answer a serious finding's outside question before Stage 2.

PROTOCOL.md section 4 item 7. After Stage 1, a P0/P1 finding whose text
refers outward (a best practice, a framework or version, documentation, a
regression, "usually", two approaches compared without a decision) becomes a
:class:`Trigger` for one research agent. At most two run, one after another,
each bounded by a timeout; a timeout or a crash is recorded as the outcome and
never stops the review.

The answers go into Stage 2 prompts and synthesis, never into expansion
scoring: research explains a finding that already exists, it is not another
reviewer's opinion. Scoring it would count one Stage 1 finding twice and make
the launch decision depend on which questions happened to be asked.

Offline, two agents do real work from the repository: ``git-history`` (the
file's recent commits, churn, fix and revert commits, main authors, and blame
around the flagged line) and ``repo-research`` (the enclosing function or
class, the tests that cover it, its callers, related files). ``framework-docs``
and ``best-practices`` need the web or a model: offline they are skipped and
repo-research answers their question from the repository when it is free;
when the review runs on the llm runtime they run on its model
(:mod:`.on_model`).
``learnings`` waits for the knowledge store. LLM runtimes plug in through the
executor table (:data:`EXECUTORS`, or ``run_research(executors=...)``): one
function per agent name, taking a :class:`ResearchRequest` and returning a
:class:`ResearchAnswer`.

Each answer is written to ``OUTPUT_DIR/research/<agent>.md`` atomically in the
research-contract shape (Sources, Findings, Confidence, Gaps; under 60 lines),
with credential-shaped text masked; the file exists exactly when the outcome
is ``completed``. Nothing is read outside the project root.

Modules, each importing only those before it: triggers, model, places,
git_history, repo_research (the two offline executors), render, runner;
``on_model`` (the model executor) is imported by the review only when a model is in use.
"""

from fluxdrive.launch.research.git_history import BLAME_CONTEXT as BLAME_CONTEXT
from fluxdrive.launch.research.git_history import CHURN_DAYS as CHURN_DAYS
from fluxdrive.launch.research.git_history import LOG_SCAN as LOG_SCAN
from fluxdrive.launch.research.git_history import RECENT_COMMITS as RECENT_COMMITS
from fluxdrive.launch.research.git_history import git_history
from fluxdrive.launch.research.model import OFFLINE_NOTE as OFFLINE_NOTE
from fluxdrive.launch.research.model import (
    RESEARCH_DIR,
    RESEARCH_TIMEOUT_S,
    Point,
    ResearchAnswer,
    ResearchExecutor,
    ResearchOutcome,
    ResearchRequest,
    ResearchStatus,
    ResearchTimeout,
)
from fluxdrive.launch.research.places import MAX_FILE_BYTES as MAX_FILE_BYTES
from fluxdrive.launch.research.render import MAX_GAPS as MAX_GAPS
from fluxdrive.launch.research.render import MAX_LINES as MAX_LINES
from fluxdrive.launch.research.render import MAX_SOURCES as MAX_SOURCES
from fluxdrive.launch.research.render import render_answer
from fluxdrive.launch.research.repo_research import CODE_SUFFIXES as CODE_SUFFIXES
from fluxdrive.launch.research.repo_research import MAX_FILES_SCANNED as MAX_FILES_SCANNED
from fluxdrive.launch.research.repo_research import repo_research
from fluxdrive.launch.research.runner import EXECUTORS, run_research
from fluxdrive.launch.research.runner import NEEDS_STORE as NEEDS_STORE
from fluxdrive.launch.research.runner import RUNTIME_NOTE as RUNTIME_NOTE
from fluxdrive.launch.research.runner import STAND_IN_FOR as STAND_IN_FOR
from fluxdrive.launch.research.runner import STORE_NOTE as STORE_NOTE
from fluxdrive.launch.research.triggers import COMPARISON_PHRASES, OUTWARD_PHRASES, Trigger, find_triggers
from fluxdrive.launch.research.triggers import FALLBACK_AGENT as FALLBACK_AGENT
from fluxdrive.launch.research.triggers import PREFERENCE as PREFERENCE

# The API as before the split. The tuning constants and notes imported `as` themselves above stay importable
# from here too, and stay outside __all__, as they were.
__all__ = [
    "COMPARISON_PHRASES",
    "EXECUTORS",
    "OUTWARD_PHRASES",
    "RESEARCH_DIR",
    "RESEARCH_TIMEOUT_S",
    "Point",
    "ResearchAnswer",
    "ResearchExecutor",
    "ResearchOutcome",
    "ResearchRequest",
    "ResearchStatus",
    "ResearchTimeout",
    "Trigger",
    "find_triggers",
    "git_history",
    "render_answer",
    "repo_research",
    "run_research",
]
