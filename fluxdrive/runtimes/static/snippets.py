"""Code inside Markdown is an example: what the analyzers may say about it.

A README's ``console.log(...)``, a tutorial's top-level ``return`` or
``await``, a snippet that uses ``app`` defined three paragraphs earlier, a
deliberate bare ``raise``: in a document these are excerpts written for a
reader, not a program. Lint and correctness rules (ruff's F/E/B/PL codes,
debug-statement and quality rules, fluxdrive's own non-security checks,
complexity) judge programs, so on an example they only cry wolf: measured on
httpx's and starlette's docs, 318 of 337 places were such noise.

So, for every hit an analyzer reports inside an *example* code block
(:attr:`~fluxdrive.runtimes.static.source.Source.example`):

- a **security** rule - one with a CWE (``data/rules/cwe.yaml`` lists every
  security rule; a test keeps it complete) - stays: a reader who copies
  ``yaml.load(...)`` or ``shell=True`` should see that it is unsafe. Its
  severity is the place's (:mod:`~fluxdrive.runtimes.static.placement`: a
  document is docs, at most P2), except in a document the user named - a
  plan under review proposes its code, so there the code is what is judged;
- **every other rule** is dropped.

"Unless the document says otherwise": a Markdown notebook (Jupytext or
MyST-NB front matter, :func:`~fluxdrive.runtimes.static.source.runs_as_code`)
runs its blocks, so they are reviewed as code, with every rule. Markdown a
project runs through a test plugin (``pytest --markdown-docs``,
``--doctest-glob``) is not detected from the project's configuration: its
blocks count as examples.

Document checks (the Markdown itself) and detect-secrets (it scans the whole
document, and every secret is a security finding) are not affected.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import replace

from fluxdrive.runtimes.static.analyzers.base import AnalyzerOutput
from fluxdrive.runtimes.static.checks.engine.registry import registered_checks
from fluxdrive.runtimes.static.compose import hit_cwe
from fluxdrive.runtimes.static.hits import Hit
from fluxdrive.runtimes.static.source import Source

_WHOLE_DOCUMENT = frozenset({"secrets"})  # analyzers that read the document itself, not its blocks


def examples_only(outputs: Sequence[AnalyzerOutput], sources: Iterable[Source]) -> list[AnalyzerOutput]:
    """The outputs with what is said about example code blocks reduced to security findings."""
    documents = {source.block_of for source in sources if source.example and source.block_of is not None}
    if not documents:
        return list(outputs)
    return [_examples_only(output, documents) for output in outputs]


def _examples_only(output: AnalyzerOutput, documents: set[str]) -> AnalyzerOutput:
    if output.name in _WHOLE_DOCUMENT:
        return output
    kept = (hit for hit in output.hits if hit.path not in documents or _on_document(hit) or hit_cwe(hit))
    return replace(output, hits=tuple(kept))


def _on_document(hit: Hit) -> bool:
    """A document check's hit: it judges the Markdown itself, not a block in it."""
    return hit.claim.analyzer == "fluxdrive" and _check_kinds().get(hit.claim.key) == "document"


@functools.cache
def _check_kinds() -> dict[str, str]:
    return {name: spec.kind for name, spec in registered_checks().items()}
