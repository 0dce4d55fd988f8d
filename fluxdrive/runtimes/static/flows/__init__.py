"""Data flow for JavaScript/TypeScript and Go: from requests (and parameters) to sinks.

The files are parsed with tree-sitter grammars through ast-grep
(:mod:`.syntax`), turned into one small language-neutral picture
(:mod:`.ir`), and read function by function (:mod:`.engine`) with the
sources, sanitizers and sinks declared as data (:mod:`.spec`,
``fluxdrive/data/taint/<family>.yaml``). A dangerous sink is always judged;
where its value comes from decides the severity (:mod:`.sinks`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from fluxdrive.runtimes.static.flows.ir import Module
from fluxdrive.runtimes.static.flows.pollution import PollutionHit, find
from fluxdrive.runtimes.static.flows.project import Project
from fluxdrive.runtimes.static.flows.sinks import FlowHit
from fluxdrive.runtimes.static.flows.spec import project_spec
from fluxdrive.runtimes.static.flows.syntax import FLOW_LANGUAGES, read_module
from fluxdrive.runtimes.static.flows.views import TemplateReader, ViewHit, view_hits

__all__ = ["FLOW_LANGUAGES", "FlowHit", "FlowResult", "PollutionHit", "ViewHit", "analyse"]


@dataclass(frozen=True)
class FlowResult:
    hits: tuple[FlowHit | PollutionHit | ViewHit, ...]
    notes: tuple[str, ...]


def analyse(
    files: Iterable[tuple[str, str, str]],
    declarations: Mapping[str, tuple[bytes | None, str | None]] | None = None,
    templates: TemplateReader | None = None,
) -> FlowResult:
    """Hits for ``(path, language, text)`` files; each language family is one project.

    ``declarations``: the bytes of the project's ``.fluxdrive/taint-<family>.yaml`` per family
    (read by the runtime). ``templates`` reads a view by its project-relative path (confined by
    the caller), for request data a handler renders into a template that prints it unescaped.
    """
    by_family: dict[str, list[Module]] = {}
    notes: list[str] = []
    for path, language, text in files:
        family = FLOW_LANGUAGES.get(language)
        if family is None:
            continue
        try:
            by_family.setdefault(family, []).append(read_module(text, path, language))
        except (RecursionError, ValueError, RuntimeError) as exc:  # a parser failure skips one file
            notes.append(f"data flow skipped {path}: {type(exc).__name__}")
    hits: list[FlowHit | PollutionHit | ViewHit] = []
    for family, modules in sorted(by_family.items()):
        spec, problem = project_spec(family, (declarations or {}).get(family, (None, None)))
        if problem:
            notes.append(problem)
        project = Project(modules, spec)
        hits.extend(project.analyse())
        notes.extend(sorted(project.notes))
        for module in modules:
            hits.extend(find(module))
        if templates is not None and project.renders:
            hits.extend(view_hits(list(project.renders.values()), templates))
    hits.sort(key=lambda h: (h.path, h.line, h.rule))
    return FlowResult(tuple(hits), tuple(notes))
