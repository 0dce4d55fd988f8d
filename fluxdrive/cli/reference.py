"""Generate the README's CLI reference from the commands' own ``--help``.

``python -m fluxdrive.cli.reference`` prints it; ``--write README.md``
replaces the text between the reference markers. A test fails when the
README drifts from ``--help``, so the two can never disagree.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from fluxdrive.core.atomic import atomic_write_text

START = "<!-- cli-reference:start -->"
END = "<!-- cli-reference:end -->"
WIDTH = 88


def _help(command: Any, path: str, parent: Any = None) -> tuple[str, Any]:
    ctx = command.context_class(
        command,
        info_name=path.rsplit(" ", 1)[-1],
        parent=parent,
        terminal_width=WIDTH,
        max_content_width=WIDTH,
    )
    return str(command.get_help(ctx)), ctx


def _walk(command: Any, path: str, parent: Any, sections: list[str]) -> None:
    text, ctx = _help(command, path, parent)
    sections.append(f"### `{path}`\n\n```text\n{text.rstrip()}\n```\n")
    for name in sorted(getattr(command, "commands", {})):
        _walk(command.commands[name], f"{path} {name}", ctx, sections)


def render_reference() -> str:
    """Every command's help text, as markdown sections, in a stable order."""
    from fluxdrive.cli.app import app

    sections: list[str] = []
    _walk(typer.main.get_command(app), "fluxdrive", None, sections)
    return "\n".join(sections)


def splice(readme: str, reference: str) -> str:
    """``readme`` with the text between the markers replaced by ``reference``."""
    head, start, rest = readme.partition(START)
    _, end, tail = rest.partition(END)
    if not start or not end:
        raise ValueError(f"README lacks the {START} / {END} markers")
    return f"{head}{START}\n{reference}{END}{tail}"


def main(argv: list[str]) -> int:
    """Print the reference, or write it into a README with ``--write PATH``."""
    reference = render_reference()
    if len(argv) == 2 and argv[0] == "--write":
        path = Path(argv[1])
        atomic_write_text(path, splice(path.read_text(encoding="utf-8"), reference))
        return 0
    sys.stdout.write(reference)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
