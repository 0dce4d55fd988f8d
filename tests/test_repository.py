"""Repository-level guarantees: public API, import layering, docs in sync."""

from __future__ import annotations

import ast
from pathlib import Path

import fluxdrive
from fluxdrive.cli.reference import END, START, render_reference

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "fluxdrive"

# Leaf modules import nothing from the package; contracts only leaves and itself.
LEAVES = {
    "fluxdrive.core.atomic",
    "fluxdrive.core.clock",
    "fluxdrive.core.graphs",
    "fluxdrive.core.columns",
    "fluxdrive.core.lifeline",
    "fluxdrive.core.names",
    "fluxdrive.core.structured",
    "fluxdrive.core.masking",
    "fluxdrive.core.match",
    "fluxdrive.errors",
}
ALLOWED = {
    "fluxdrive.contracts": LEAVES | {"fluxdrive.contracts"},
    "fluxdrive.core.paths": {"fluxdrive.errors"},
    "fluxdrive.core.confine": {"fluxdrive.errors", "fluxdrive.core.paths"},
    "fluxdrive.exchange.channel": LEAVES
    | {"fluxdrive.core.paths", "fluxdrive.core.confine", "fluxdrive.exchange.stream"},
    "fluxdrive.exchange.stream": LEAVES | {"fluxdrive.core.atomic"},
    "fluxdrive.exchange.verdicts": LEAVES
    | {"fluxdrive.core.paths", "fluxdrive.core.confine", "fluxdrive.core.project"},
    # Config reads its files (confined, regular files only) and a diff's base commit through git.
    "fluxdrive.config": LEAVES
    | {"fluxdrive.core.confine", "fluxdrive.core.git", "fluxdrive.core.paths", "fluxdrive.config"},
    # Agents: the same, plus the trust rule for what a project definition may set.
    "fluxdrive.agents": LEAVES
    | {
        "fluxdrive.core.confine",
        "fluxdrive.core.git",
        "fluxdrive.core.paths",
        "fluxdrive.agents",
        "fluxdrive.config.trust",
    },
    "fluxdrive.core.pool": LEAVES,
    "fluxdrive.core.run_dirs": LEAVES,
    "fluxdrive.core.git": {"fluxdrive.errors"},
    "fluxdrive.workspace": LEAVES
    | {
        "fluxdrive.core.git",
        "fluxdrive.core.paths",
        "fluxdrive.core.project",
        "fluxdrive.core.confine",
        "fluxdrive.core.run_dirs",
    },
    "fluxdrive.runs.history": LEAVES | {"fluxdrive.config", "fluxdrive.contracts"},
    # Triage decides from the input, the config, the roster and past feedback; it never runs agents.
    "fluxdrive.triage": LEAVES
    | {
        "fluxdrive.core.confine",
        "fluxdrive.core.git",
        "fluxdrive.core.project",  # the domain cache is written only inside the project
        "fluxdrive.agents",
        "fluxdrive.config",
        "fluxdrive.runs.history",
        "fluxdrive.triage",
        "fluxdrive.workspace",
    },
    # Synthesis is pure: it reads agent files and the channel, writes nothing.
    "fluxdrive.synthesis": LEAVES
    | {
        "fluxdrive",
        "fluxdrive.core.confine",
        "fluxdrive.core.paths",
        "fluxdrive.core.project",
        "fluxdrive.exchange.channel",
        "fluxdrive.config",
        "fluxdrive.contracts",
        "fluxdrive.synthesis",
    },
    # Knowledge is files and text: it reads findings (synthesis) and agent lanes, never runs anything.
    "fluxdrive.knowledge": LEAVES
    | {"fluxdrive.core.paths", "fluxdrive.agents", "fluxdrive.knowledge", "fluxdrive.synthesis"},
    # The maintenance pipeline meets only through files; it borrows the knowledge ids and the dedup rule.
    "fluxdrive.kb": LEAVES
    | {
        "fluxdrive.core.git",
        "fluxdrive.config",
        "fluxdrive.kb",
        "fluxdrive.knowledge",
        "fluxdrive.runtimes",  # the model-backed inquisitor asks through the llm runtime
        "fluxdrive.synthesis",
        "fluxdrive.workspace",
    },
    # Reports render a synthesis; the HTML page also reads run.json and quotes code, confined to the project.
    "fluxdrive.reports": LEAVES
    | {
        "fluxdrive",
        "fluxdrive.core.confine",
        "fluxdrive.core.paths",
        "fluxdrive.core.project",
        "fluxdrive.exchange.channel",  # the timeline's peer findings
        "fluxdrive.contracts",
        "fluxdrive.errors",
        "fluxdrive.reports",
        "fluxdrive.synthesis",
        "fluxdrive.exchange.verdicts",
    },
    # Checks are pure functions over syntax trees: nothing but their own framework.
    # (and the per-file time bound they stop at, the regex analysis the ReDoS check asks, and the origin
    # judgment they share with the JavaScript/Go flow engine: stdlib-only modules)
    "fluxdrive.runtimes.static.checks": {
        "fluxdrive.runtimes.static.checks",
        "fluxdrive.runtimes.static.bounds",
        "fluxdrive.runtimes.static.redos",
        "fluxdrive.runtimes.static.provenance",
        "fluxdrive.core.graphs",
    },
    # The JavaScript/TypeScript and Go flow engine: syntax trees in, judged hits out; nothing of the runtime.
    "fluxdrive.runtimes.static.flows": {
        "fluxdrive.runtimes.static.flows",
        "fluxdrive.runtimes.static.redos",
        "fluxdrive.runtimes.static.provenance",
        "fluxdrive.core.graphs",
    },
    "fluxdrive.runtimes": LEAVES
    | {
        "fluxdrive",
        "fluxdrive.core.confine",
        "fluxdrive.core.git",  # a diff's base commit: the taint declarations that apply
        "fluxdrive.core.paths",
        "fluxdrive.core.pool",  # the static analyzers' worker processes
        "fluxdrive.core.threads",  # the static analyzers' worker threads
        "fluxdrive.workspace",  # the llm tools list files as triage does (.gitignore, skipped dirs)
        "fluxdrive.agents",
        "fluxdrive.exchange.channel",
        "fluxdrive.config",
        "fluxdrive.contracts",
        "fluxdrive.runtimes",
        "fluxdrive.exchange.verdicts",
    },
}


def test_public_api_is_deliberate() -> None:
    assert fluxdrive.__all__ == sorted(fluxdrive.__all__)
    assert fluxdrive.__all__ == [
        "AgentDefinition",
        "Config",
        "FluxdriveError",
        "IndexEntry",
        "ParsedIndex",
        "PeerFinding",
        "ReviewOptions",
        "Synthesis",
        "Triage",
        "VerdictRecord",
        "__version__",
        "channel",
        "contracts",
        "load_config",
        "load_roster",
        "review",
        "synthesize",
        "triage_target",
        "verdicts",
    ]
    for name in fluxdrive.__all__:
        assert hasattr(fluxdrive, name), name


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module == "fluxdrive":
            # ``from fluxdrive import __version__`` imports the package root, not a module
            found.update("fluxdrive" if a.name.startswith("__") else f"fluxdrive.{a.name}" for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name == "fluxdrive" or name.startswith("fluxdrive.")}


def _allowed(target: str, allowed: set[str]) -> bool:
    # "fluxdrive" allows the package root itself (``from fluxdrive import __version__``), not every module under it
    return any(target == a or (a != "fluxdrive" and target.startswith(a + ".")) for a in allowed)


def test_layers_point_one_way() -> None:
    violations = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        imports = _imports(path)
        if module in LEAVES and imports:
            violations.append(f"{module} is a leaf but imports {sorted(imports)}")
        for layer, allowed in ALLOWED.items():
            if module == layer or module.startswith(layer + "."):
                bad = sorted(i for i in imports if not _allowed(i, allowed))
                if bad:
                    violations.append(f"{module} may not import {bad}")
        if not module.startswith(("fluxdrive.cli", "fluxdrive.__main__")):
            bad = sorted(i for i in imports if i.startswith("fluxdrive.cli"))
            if bad:
                violations.append(f"{module} imports the CLI: {bad}")
    assert violations == []


def test_readme_cli_reference_matches_help() -> None:
    readme = (REPO / "README.md").read_text()
    current = readme.split(START, 1)[1].split(END, 1)[0].lstrip("\n")
    assert current == render_reference(), "README drifted from --help: run `make docs`"


def test_readme_quick_start_and_ci_wiring() -> None:
    readme = (REPO / "README.md").read_text()
    assert "make test" in readme
    assert (REPO / ".ci" / "run").read_text().strip().endswith("exec make test")
    assert (REPO / "requirements.lock").exists() and (REPO / "requirements-dev.lock").exists()


def test_readme_examples_are_what_the_commands_print() -> None:
    """Every example output in the README is re-run; a change in what fluxdrive prints fails here (make docs)."""
    from fluxdrive.cli.examples import comparable, examples, run_example

    found = examples((REPO / "README.md").read_text())
    assert found, "the README has example blocks"
    for args, body in found:
        now = comparable(run_example(args, REPO))
        assert now == comparable(body), f"README example drifted: fluxdrive {args} (run `make docs`)"
