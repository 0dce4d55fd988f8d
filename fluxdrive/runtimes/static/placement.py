"""Where a file sits in a project, and how high a finding there can go.

The same line means different things in different places. ``pickle.loads``
in a test round-trips an object the test just built; ``verify=False`` in a
test talks to the test's own server; ``Starlette(debug=True)`` in a
documentation page is a tutorial; a release script under ``tools/`` runs on a
maintainer's machine with a fixed input. Reported as production code, they
turned healthy projects RISKY (measured on seven well-kept projects: 23 of 28
false P0/P1 were in tests, docs, examples and maintainer tooling). So:

- **code**: the shipped source; findings keep their severity.
- **test**, **example**, **docs**, **tooling**: at most P2 - still listed, so
  a user who copies an example sees the warning, but never what fails a gate.

The place comes from the path only (directory names and file names), so it is
the same on every machine and for every analyzer - and only from the part of
the path below the directory the user named. ``fluxdrive review
tests/fixtures/shop`` asks about the shop: that it sits under ``tests/`` is
where the project keeps it, not what it is (the quick start's vulnerable demo
app came out SAFE, every finding capped as test code). Its own ``tests/`` are
still tests. CI workflow files
(``.github/workflows``) are *code*: a workflow runs with the repository's
secrets, and injection there is a real attack.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Literal

Place = Literal["code", "test", "example", "docs", "tooling"]

_TEST_DIRS = frozenset({"test", "tests", "testing", "__tests__", "spec", "specs", "e2e", "fixtures", "testdata"})
# Plural names only: ``com/example/`` is every Java tutorial's package, and real code lives there too.
_EXAMPLE_DIRS = frozenset({"examples", "samples", "demos", "tutorial", "tutorials", "cookbook", "docs_src"})
_DOC_DIRS = frozenset({"doc", "docs", "documentation", "website"})
# Not ``scripts/`` or ``ci/``: deploy and CI scripts run in production with its secrets.
_TOOL_DIRS = frozenset({"tools", "benchmarks", "bench", "benchmark", ".devcontainer"})
_DOC_SUFFIXES = frozenset({".md", ".markdown", ".rst", ".txt", ".adoc", ".ipynb"})
_TEST_NAME = re.compile(
    r"^(test_.*\.py|.*_test\.(py|go)|conftest\.py|.*\.(test|spec)\.(js|jsx|ts|tsx|mjs|cjs)|.*Test\.java)$"
)
_TOOL_NAMES = frozenset({"noxfile.py", "tasks.py", "fabfile.py", "setup.py", "conf.py"})
CAPS: dict[Place, str] = {"code": "P0", "test": "P2", "example": "P2", "docs": "P2", "tooling": "P2"}


def below(path: str, reviewed: str) -> str:
    """``path`` (project-relative) as seen from ``reviewed``, the directory the user named ("" for the root)."""
    prefix = reviewed.strip("/") + "/" if reviewed.strip("/") else ""
    return path[len(prefix) :] if prefix and path.startswith(prefix) else path


def place_of(path: str, reviewed: str = "") -> Place:
    """The place of a project-relative POSIX path (a markdown code block counts as its document)."""
    pure = PurePosixPath(below(path, reviewed))
    folders = {part.lower().lstrip("_") for part in pure.parts[:-1]}  # Go's tools skip "_examples/" and read it so
    name = pure.name
    if folders & _TEST_DIRS or _TEST_NAME.match(name):
        return "test"
    if folders & _EXAMPLE_DIRS:
        return "example"
    if folders & _DOC_DIRS or pure.suffix.lower() in _DOC_SUFFIXES:
        return "docs"
    if folders & _TOOL_DIRS or name in _TOOL_NAMES:
        return "tooling"
    return "code"


def capped(severity: str, path: str, reviewed: str = "") -> tuple[str, Place]:
    """``severity`` lowered to what the file's place allows, and the place."""
    place = place_of(path, reviewed)
    cap = CAPS[place]
    return (cap if severity < cap else severity), place
