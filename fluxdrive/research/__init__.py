"""flux-research: a question about the project, answered by the research agents.

``fluxdrive research "QUESTION" [--scope PATH]``, the MCP tool ``research``
and :func:`research` here all run :mod:`fluxdrive.research.run`: triage the
question to research agents (:mod:`.query`), run them through the review's
dispatcher (:mod:`.runtime`), answer offline from the project
(:mod:`.offline`) or on a model, and synthesize one answer with citations
(:mod:`.synthesis`).

Modules, each importing only those before it: query, offline, report,
runtime, synthesis, run.
"""

from fluxdrive.research.run import ResearchResult, research

__all__ = ["ResearchResult", "research"]
