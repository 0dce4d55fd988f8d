"""What taint tracking learns from the project itself: its helper modules and its declarations.

Summaries follow calls into the project's own modules (``from helpers import
separate_request``), so the checks need to read those files even when they are
not part of the reviewed input (a diff touching one view still calls the
unchanged helpers). Reads stay inside the project root, symlinks resolved,
and a module that cannot be read or parsed is simply not summarized.

A project declares its framework's sources, sanitizers and sinks in
``.fluxdrive/taint.yaml`` (the shape of ``fluxdrive/data/taint/python.yaml``).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable
from pathlib import Path

import yaml

from fluxdrive.core import git as _git
from fluxdrive.core.confine import read_confined
from fluxdrive.errors import FluxdriveError
from fluxdrive.runtimes.static.checks.engine.pymodule import PyModule, TemplateReader
from fluxdrive.runtimes.static.checks.engine.pyparse import parse_python
from fluxdrive.runtimes.static.checks.engine.summaries import Loader, ProjectSummaries
from fluxdrive.runtimes.static.checks.engine.taint_spec import TaintSpec, TaintSpecError, extend, parse, shipped
from fluxdrive.runtimes.static.source import Source

DECLARATIONS = ".fluxdrive/taint.yaml"
SOURCE_ROOTS = ("", "src")


def module_loader(root: Path, max_bytes: int) -> Loader:
    """Load ``a.b`` from ``a/b.py`` or ``a/b/__init__.py`` (also under ``src/``), inside ``root``."""

    def load(dotted: str) -> PyModule | None:
        parts = dotted.split(".")
        if not all(part.isidentifier() for part in parts):
            return None
        for base in SOURCE_ROOTS:
            prefix = [base] if base else []
            for relative in ("/".join([*prefix, *parts]) + ".py", "/".join([*prefix, *parts, "__init__.py"])):
                path = root / relative
                if not path.is_file():
                    continue
                try:
                    text = read_confined(path, root, "module", limit=max_bytes).decode("utf-8", errors="replace")
                    return PyModule(relative, text, parse_python(text, filename=relative))
                except (FluxdriveError, OSError, SyntaxError, ValueError, RecursionError):
                    return None
        return None

    return load


def project_files(sources: Iterable[Source], root: Path, max_bytes: int, what: str) -> Callable[[str], str | None]:
    """A reader of project files by relative path: a reviewed file from the sources already loaded, any
    other from disk inside the root (confined), so a diff still sees unchanged templates and views.

    None when the file is absent; :class:`FluxdriveError` or :class:`OSError` when it is there but
    refused (a link out of the project, a device).
    """
    loaded = {source.path: source.text for source in sources if source.block_of is None}

    def read(relative: str) -> str | None:
        if relative in loaded:
            return loaded[relative]
        path = root / relative
        if not path.is_file():
            return None
        return read_confined(path, root, what, limit=max_bytes).decode("utf-8", "replace")

    return read


def template_reader(sources: Iterable[Source], root: Path, max_bytes: int) -> TemplateReader:
    """Find a template a view renders: ``templates/NAME`` beside the view or in any folder above it,
    up to the root (Flask's and Django's app layouts)."""
    files = project_files(sources, root, max_bytes, "template")

    def read(module_path: str, name: str) -> tuple[str, str] | None:
        if not name or name.startswith("/") or ".." in name.split("/"):
            return None
        folder = posixpath.dirname(module_path)
        while True:
            relative = posixpath.join(folder, "templates", name) if folder else posixpath.join("templates", name)
            try:
                text = files(relative)
            except (FluxdriveError, OSError):
                return None
            if text is not None:
                return relative, text
            if not folder:
                return None
            folder = posixpath.dirname(folder)

    return read


# The project's taint.yaml as read: its bytes (None: there is none), or why it could not be read.
Declared = tuple[bytes | None, str | None]


def read_declarations(root: Path, revision: str | None = None, name: str = DECLARATIONS) -> Declared:
    """The bytes of the project's ``.fluxdrive/taint.yaml`` (or ``name``; None: there is none), or why not.

    Read once, where the review runs, and handed to every chunk as data: a shard on another machine has no
    project tree, and a diff is analyzed under its base commit's declarations (``revision``), never under
    the ones the change itself brings - a change must not declare its own input sanitized.
    """
    if revision is not None:
        return _git.show_file(root, revision, name), None
    path = root / name
    if not path.is_file():
        return None, None
    try:
        return read_confined(path, root, "taint declarations", limit=1_000_000), None
    except (FluxdriveError, OSError) as exc:
        return None, str(exc).splitlines()[0]


def declarations(declared: Declared) -> tuple[TaintSpec, str | None]:
    """The shipped declarations plus the project's (from :func:`read_declarations`), and a note if bad."""
    data, problem = declared
    if problem is not None:
        return shipped(), f"{DECLARATIONS} ignored: {problem}"
    if data is None:
        return shipped(), None
    try:
        return extend(shipped(), parse(yaml.safe_load(data.decode("utf-8")), DECLARATIONS)), None
    except (UnicodeDecodeError, yaml.YAMLError, TaintSpecError, RecursionError) as exc:
        return shipped(), f"{DECLARATIONS} ignored: {str(exc).splitlines()[0]}"


def project_summaries(root: Path, max_bytes: int, declared: Declared) -> tuple[ProjectSummaries, str | None]:
    """Summaries over the project at ``root`` with its declarations (and a note on a bad declarations file)."""
    spec, note = declarations(declared)
    return ProjectSummaries(module_loader(root, max_bytes), spec), note
