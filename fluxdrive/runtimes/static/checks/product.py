"""fd-user-product checks on code: command-line interfaces without help text.

Covers argparse (``add_argument``/``add_parser``), click (``click.option``
and ``@command``/``@group`` functions) and typer (``typer.Option``,
``typer.Argument`` and ``@app.command()`` functions). ``click.argument`` is
left alone: click arguments take no ``help=`` and are documented in the
command's docstring instead.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from fluxdrive.runtimes.static.checks._common import Function, example_lines, qualified_name
from fluxdrive.runtimes.static.checks.engine.pymodule import PyModule
from fluxdrive.runtimes.static.checks.engine.registry import CheckHit, python_check
from fluxdrive.runtimes.static.checks.engine.syntax import call_name, keyword


def _imported_from(module: PyModule) -> dict[str, str]:
    """Local name -> library for ``import click`` / ``from typer import Option``."""
    names: dict[str, str] = {}
    for node in module.of_type(ast.Import, ast.ImportFrom):
        if isinstance(node, ast.Import):
            for alias in node.names:
                root = alias.name.split(".")[0]
                names[alias.asname or root] = root
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module.split('.')[0]}.{alias.name}"
    return names


def _lacks_help(call: ast.Call) -> bool:
    if any(k.arg is None for k in call.keywords):
        return False  # **options may carry help
    action = keyword(call, "action")
    if isinstance(action, ast.Constant) and action.value in {"version", "help"}:
        return False  # argparse writes these help lines itself
    hidden = keyword(call, "hidden")
    if isinstance(hidden, ast.Constant) and hidden.value is True:
        return False
    given = keyword(call, "help")
    return given is None or (isinstance(given, ast.Constant) and given.value is None)


def _flag_text(call: ast.Call, module: PyModule, typer: bool = False) -> str:
    """``--dry-run`` / ``-v/--verbose`` / ``path``; typer's first argument is a default value."""
    names = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    flags = [n for n in names if n.startswith("-")]
    if flags:
        return "/".join(flags)
    if names and not typer:
        return names[0]
    return _parameter_name(call, module) or "(unnamed)"


def _parameter_name(call: ast.Call, module: PyModule) -> str | None:
    """The typer parameter whose default or ``Annotated[...]`` holds ``call``."""
    function = module.enclosing_function(call)
    if function is None:
        return None
    args = function.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    for arg in every:
        if arg.annotation is not None and any(n is call for n in ast.walk(arg.annotation)):
            return arg.arg
    defaults = list(zip(reversed(args.args), reversed(args.defaults), strict=False))
    defaults += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d]
    return next((a.arg for a, d in defaults if d is call), None)


def _argparse_call(call: ast.Call, uses_argparse: bool) -> bool:
    """``parser.add_argument`` in a module importing argparse, or on a parser-named object."""
    if not isinstance(call.func, ast.Attribute):
        return False
    receiver = call_name(call.func.value).lower()
    return uses_argparse or "parser" in receiver or "group" in receiver


def _option_hits(module: PyModule, imports: dict[str, str]) -> Iterator[tuple[ast.Call, str]]:
    uses_argparse = "argparse" in imports.values()
    for node in module.of_type(ast.Call):
        if not isinstance(node, ast.Call) or not _lacks_help(node):
            continue
        name = qualified_name(node, imports)
        method = name.rsplit(".", 1)[-1]
        argparse_like = method.startswith("add_") and _argparse_call(node, uses_argparse)
        if method == "add_argument" and argparse_like:
            flag = _flag_text(node, module)
            yield node, f"{'option' if flag.startswith('-') else 'argument'} `{flag}`"
        elif method == "add_parser" and argparse_like:
            yield node, f"subcommand `{_flag_text(node, module)}`"
        elif name == "click.option":
            yield node, f"option `{_flag_text(node, module)}`"
        elif name in {"typer.Option", "typer.Argument"}:
            kind = name.split(".")[1].lower()
            yield node, f"{kind} `{_flag_text(node, module, typer=True)}`"


def _command_decorator(function: Function, cli_module: bool) -> ast.expr | None:
    """``@click.command()``, ``@cli.group``, ``@app.command()`` (in a click/typer module)."""
    for decorator in function.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        parts = call_name(target).split(".")
        if parts[-1] in {"command", "group"} and (cli_module or "cli" in parts):
            return decorator
    return None


def _command_label(function: Function, decorator: ast.expr) -> str:
    given = decorator.args[0] if isinstance(decorator, ast.Call) and decorator.args else None
    if isinstance(given, ast.Constant) and isinstance(given.value, str):
        return given.value
    return function.name.replace("_", "-")


def _command_hits(module: PyModule, imports: dict[str, str]) -> Iterator[tuple[ast.AST, str]]:
    cli_module = any(origin.split(".")[0] in {"click", "typer"} for origin in imports.values())
    for node in module.function_defs:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        decorator = _command_decorator(node, cli_module)
        if decorator is None or ast.get_docstring(node):
            continue
        if isinstance(decorator, ast.Call) and not _lacks_help(decorator):
            continue
        yield node, f"command `{_command_label(node, decorator)}`"


@python_check(
    "cli-help-text",
    tag="user-product",
    severity="P3",
    summary="CLI options, arguments, subcommands or commands that --help cannot describe",
    tests=False,
    match=[
        example_lines(
            "import argparse",
            "def build_parser():",
            "    parser = argparse.ArgumentParser(description='Sync files.')",
            "    parser.add_argument('--dry-run', action='store_true')",
            "    return parser",
        ),
        example_lines(
            "import click",
            "@click.command()",
            "@click.option('--retries', default=3, help='How often to retry.')",
            "@click.option('--force', is_flag=True)",
            "def deploy(retries, force):",
            "    '''Deploy the current build.'''",
        ),
        example_lines(
            "import typer",
            "app = typer.Typer()",
            "@app.command()",
            "def sync(path: str = typer.Argument(..., help='Folder to sync.')):",
            "    run(path)",
        ),
        example_lines(
            "from typing import Annotated",
            "import typer",
            "def main(count: Annotated[int, typer.Option('--count', '-n')] = 1):",
            "    '''Print a greeting.'''",
        ),
    ],
    no_match=[
        example_lines(
            "import argparse",
            "def build_parser():",
            "    parser = argparse.ArgumentParser(description='Sync files.')",
            "    parser.add_argument('--dry-run', action='store_true', help='Show, do not copy.')",
            "    sub = parser.add_subparsers()",
            "    sub.add_parser('init', help='Create a config file.')",
            "    return parser",
        ),
        example_lines(
            "import click",
            "@click.command()",
            "@click.argument('src')",
            "@click.option('--force', is_flag=True, help='Overwrite existing files.')",
            "def deploy(src, force):",
            "    '''Deploy SRC to the server.'''",
        ),
        example_lines(
            "import typer",
            "app = typer.Typer()",
            "@app.command(help='Sync a folder to the bucket.')",
            "def sync(path: str = typer.Argument(..., help='Folder to sync.')):",
            "    run(path)",
        ),
    ],
)
def cli_help_text(module: PyModule) -> Iterator[CheckHit]:
    markers = ("add_argument", "add_parser", "click", "typer", "cli")
    if not any(m in module.text for m in markers):
        return
    imports = _imported_from(module)
    for node, what in _option_hits(module, imports):
        yield CheckHit(
            line=node.lineno,
            title=f"CLI {what} has no help text {module.where(node)}",
            why="--help lists it with no explanation, so users have to guess what it does or read the source.",
            fix="Add help='...' saying what it changes and its default, e.g. "
            "help='Show what would change without writing anything.'",
        )
    for definition, what in _command_hits(module, imports):
        yield CheckHit(
            line=getattr(definition, "lineno", 1),
            title=f"CLI {what} has no docstring or help= text",
            why="The command shows up in --help with an empty description, so users cannot tell "
            "what it does before running it.",
            fix="Add a docstring to the function (its first line becomes the summary) or pass "
            "help='...' to the command decorator.",
        )
