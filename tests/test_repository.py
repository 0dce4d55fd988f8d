"""Repository-level guarantees: public API, import layering, docs in sync."""

from __future__ import annotations

import ast
from pathlib import Path

import fluxdrive
from fluxdrive.cli.reference import END, START, render_reference

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "fluxdrive"

# Leaf modules import nothing from the package.
LEAVES = {
    "fluxdrive.core.atomic",
    "fluxdrive.core.clock",
    "fluxdrive.core.columns",
    "fluxdrive.core.graphs",
    "fluxdrive.core.lifeline",
    "fluxdrive.core.masking",
    "fluxdrive.core.match",
    "fluxdrive.core.names",
    "fluxdrive.core.structured",
    "fluxdrive.core.version",
    "fluxdrive.errors",
    "fluxdrive.extensions",
}
# Every top-level package and module of fluxdrive, in tiers, lowest first. A module imports only from its own
# unit (the longest name below that it starts with) and from units of lower tiers: never up, never sideways.
LAYERS: tuple[tuple[str, ...], ...] = (
    # what every layer may use: errors shown to people, the extension points, stdlib-level building blocks
    ("fluxdrive.errors", "fluxdrive.extensions"),
    ("fluxdrive.core",),
    # the protocol's data: agent output contracts, config, the input and its files, what agents exchange
    ("fluxdrive.contracts", "fluxdrive.config", "fluxdrive.workspace", "fluxdrive.exchange"),
    # agent definitions; synthesis (pure: reads agent files and the channel); the history database
    ("fluxdrive.agents", "fluxdrive.synthesis", "fluxdrive.runs.history"),
    # triage decides, runtimes execute one agent, reports render a synthesis, knowledge learns from it
    ("fluxdrive.triage", "fluxdrive.runtimes", "fluxdrive.reports", "fluxdrive.knowledge", "fluxdrive.imports"),
    # measured precision: the history's table of judged findings, in synthesis's format
    ("fluxdrive.runs.precision",),
    # what reads finished runs (the run directory, baselines); the knowledge-base pipeline
    ("fluxdrive.runs", "fluxdrive.kb"),
    # suggested fixes: attached to a synthesis (launch), read back from a run (fix, the publishers)
    ("fluxdrive.fixes",),
    # one review: plan -> execute
    ("fluxdrive.launch",),
    # research answers questions through launch's dispatcher; scale is the backends a review is given
    ("fluxdrive.research", "fluxdrive.scale"),
    # the review API every front door calls
    ("fluxdrive.api",),
    # front doors and what they do with runs
    ("fluxdrive.eval", "fluxdrive.publish", "fluxdrive.scale.fleet"),
    ("fluxdrive.mcp",),
    ("fluxdrive.cli",),
    ("fluxdrive.__main__", "fluxdrive"),  # the package root names the public API lazily
)
# Inside the static runtime: checks are pure functions over syntax trees, the JS/Go flow engine is syntax trees
# in and judged hits out; neither knows the runtime around it (stdlib-only helpers they share are named).
INNER = {
    "fluxdrive.runtimes.static.checks": {
        "fluxdrive.runtimes.static.checks",
        "fluxdrive.extensions",  # checks are discovered through the fluxdrive.checks entry points
        "fluxdrive.runtimes.static.bounds",
        "fluxdrive.runtimes.static.redos",
        "fluxdrive.runtimes.static.provenance",
        "fluxdrive.runtimes.static.placement",  # where a file sits: a test, a setting, an example
        "fluxdrive.core.graphs",
    },
    "fluxdrive.runtimes.static.flows": {
        "fluxdrive.runtimes.static.flows",
        "fluxdrive.runtimes.static.redos",
        "fluxdrive.runtimes.static.provenance",
        "fluxdrive.core.graphs",
    },
}


def test_public_api_is_deliberate() -> None:
    assert fluxdrive.__all__ == sorted(fluxdrive.__all__)
    assert fluxdrive.__all__ == [
        "AgentDefinition",
        "Config",
        "FluxdriveError",
        "IndexEntry",
        "Interaction",
        "ParsedIndex",
        "PeerFinding",
        "ReviewOptions",
        "ReviewPlan",
        "ReviewSettings",
        "RunDirectory",
        "Synthesis",
        "Triage",
        "VerdictRecord",
        "__version__",
        "approve",
        "channel",
        "contracts",
        "execute",
        "load_config",
        "load_roster",
        "plan_review",
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


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _resolve(name: str) -> str:
    """The module ``name`` is, or the package it lies in."""
    while name not in MODULES and "." in name:
        name = name.rpartition(".")[0]
    return name


def _imports(path: Path) -> set[str]:
    """The fluxdrive modules ``path`` imports anywhere in it (inside functions too), resolved to modules."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and node.module.startswith("fluxdrive"):
            for alias in node.names:
                whole = f"{node.module}.{alias.name}"
                found.add(whole if whole in MODULES else _resolve(node.module))
        elif isinstance(node, ast.Import):
            found.update(_resolve(a.name) for a in node.names if a.name.startswith("fluxdrive"))
    return found - {_module_name(path)}


def _unit(module: str) -> tuple[int, str] | None:
    """The tier and unit (the longest name in LAYERS that ``module`` is or lies in)."""
    found = [
        (len(unit), tier, unit)
        for tier, units in enumerate(LAYERS)
        for unit in units
        if module == unit or (unit != "fluxdrive" and module.startswith(unit + "."))
    ]
    if not found:
        return None
    _length, tier, unit = max(found)
    return tier, unit


def test_every_module_has_a_layer_and_imports_point_down() -> None:
    violations = []
    for module, path in MODULES.items():
        imports = _imports(path)
        if module in LEAVES and imports:
            violations.append(f"{module} is a leaf but imports {sorted(imports)}")
        placed = _unit(module)
        if placed is None:
            violations.append(f"{module} has no layer: add its package to LAYERS")
            continue
        tier, unit = placed
        for target in sorted(imports):
            where = _unit(target)
            assert where is not None, target
            if where[1] != unit and where[0] >= tier:
                violations.append(f"{module} (tier {tier}) may not import {target} (tier {where[0]})")
        for inner, allowed in INNER.items():
            if module == inner or module.startswith(inner + "."):
                bad = sorted(i for i in imports if not any(i == a or i.startswith(a + ".") for a in allowed))
                if bad:
                    violations.append(f"{module} may not import {bad}")
    assert violations == []


def test_no_import_circle_inside_the_package() -> None:
    """Not even through imports inside functions: a circle hidden in a function is still a circle."""
    from fluxdrive.core.graphs import strongly_connected

    graph = {module: sorted(_imports(path)) for module, path in MODULES.items()}
    circles = [sorted(c) for c in strongly_connected(sorted(graph), lambda m: graph.get(m, [])) if len(c) > 1]
    assert circles == []


def test_no_code_outside_a_runtime_names_one() -> None:
    """Runtime capabilities are data on the protocol (costs_tokens, can_run, distribute), not name tests."""
    named = []
    for module, path in MODULES.items():
        if module.startswith("fluxdrive.runtimes.static"):
            continue
        text = path.read_text()
        if '== "static"' in text or "isinstance(runtime, StaticRuntime)" in text or "StaticRuntime)" in text:
            named.append(module)
    assert named == []


PARSERS = {"loads", "load_json", "model_validate_json"}


def _parses_findings_json(path: Path) -> bool:
    """Names the file ``"findings.json"`` in code (not prose) and calls ``json.loads``."""
    tree = ast.parse(path.read_text())
    names = any(isinstance(n, ast.Constant) and n.value == "findings.json" for n in ast.walk(tree))
    loads = any(
        isinstance(n, ast.Call) and (getattr(n.func, "attr", None) or getattr(n.func, "id", None)) in PARSERS
        for n in ast.walk(tree)
    )
    return names and loads


def test_only_the_run_directory_parses_findings_json() -> None:
    """One typed, confined reader of a run (fluxdrive.runs.directory): nobody else parses findings.json."""
    readers = [m for m, path in MODULES.items() if _parses_findings_json(path)]
    assert readers == ["fluxdrive.runs.directory"]


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
