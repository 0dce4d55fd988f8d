"""Which languages the flow engine reads, and the one entry point that parses a file of any of them."""

from __future__ import annotations

from fluxdrive.runtimes.static.flows.ir import Module

# A source's language (as fluxdrive names it) -> the family whose declarations apply.
FLOW_LANGUAGES = {"javascript": "javascript", "typescript": "javascript", "tsx": "javascript", "go": "go"}


def read_module(text: str, path: str, language: str) -> Module:
    """Parse one file into the engine's picture of it (tree-sitter grammars through ast-grep)."""
    if FLOW_LANGUAGES[language] == "go":
        from fluxdrive.runtimes.static.flows import golang

        return golang.read_module(text, path)
    from fluxdrive.runtimes.static.flows import javascript

    return javascript.read_module(text, path, language)
