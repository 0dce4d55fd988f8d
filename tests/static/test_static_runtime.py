"""The static runtime end to end on small realistic projects (tests/fixtures/projects)."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from fluxdrive.agents import builtin_agents
from fluxdrive.cli.examples import clean_copy
from fluxdrive.config import Config, load_config
from fluxdrive.contracts import OutputStatus, classify_output
from fluxdrive.exchange import channel
from fluxdrive.runtimes import AgentTask, ReviewContent, run_guarded
from fluxdrive.runtimes.static import StaticRuntime
from fluxdrive.runtimes.static.agent_section import static_section
from fluxdrive.runtimes.static.analyzers import registry
from fluxdrive.runtimes.static.checks.engine.registry import registered_checks
from fluxdrive.runtimes.static.ownership import Ownership
from fluxdrive.runtimes.static.rules import load_rules
from fluxdrive.workspace import review_files

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "projects"
REVIEW_AGENTS = sorted(n for n, a in builtin_agents().items() if a.kind == "review")
AWS_EXAMPLE_KEY = "AKIAIOSFODNN7EXAMPLE"


def _copy(name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    clean_copy(FIXTURES / name, target)
    return target


def _review(
    root: Path,
    agents: list[str],
    config: Config | None = None,
    runtime: StaticRuntime | None = None,
    **content: object,
) -> dict[str, list[tuple[str, str, str]]]:
    """Run agents concurrently on one StaticRuntime; return (severity, location, title) per agent."""
    config = config or load_config(root, env={}).config
    runtime = runtime or StaticRuntime()
    output = root.parent / f"{root.name}-out"
    output.mkdir(exist_ok=True)
    files = content.pop("files", None) or review_files(root, root)
    review = ReviewContent(root, files, **content)  # type: ignore[arg-type]

    async def all_agents() -> None:
        tasks = [
            AgentTask(
                builtin_agents()[a],
                "",
                review,
                output,
                output / "peer-findings.jsonl",
                config,
                120.0,
            )
            for a in agents
        ]
        await asyncio.gather(*(run_guarded(runtime, t) for t in tasks))

    asyncio.run(all_agents())
    found = {}
    for agent in agents:
        result = classify_output(output / f"{agent}.md")
        assert result.status is OutputStatus.VALID, (agent, result.reason)
        found[agent] = [(e.severity, e.location or "", e.title) for e in result.index.entries]
    return found


def _has(found: list[tuple[str, str, str]], severity: str, location: str, words: str) -> bool:
    return any(s == severity and loc == location and words.lower() in t.lower() for s, loc, t in found)


def test_python_webapp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _copy("py-webapp", tmp_path)
    calls: list[str] = []
    table = registry.analyzers()  # the one table the analysis and the per-file pass read
    for name, function in dict(table).items():
        monkeypatch.setitem(table, name, lambda ctx, f=function, n=name: (calls.append(n), f(ctx))[1])
    found = _review(root, REVIEW_AGENTS)
    assert sorted(calls) == sorted(set(calls)), f"an analyzer ran twice: {calls}"

    safety = found["fd-safety"]
    assert _has(safety, "P0", "shop/config.py:4", "hard-coded aws access key")
    assert _has(
        safety,
        "P0",  # the helper's parameter: its callers pass what they receive
        "shop/db.py:15",
        "sql built with '%' formatting from parameter `name` reaches cur.execute() in find_user()",
    )
    assert _has(safety, "P0", "shop/routes.py:45", "shell")
    assert _has(safety, "P0", "shop/routes.py:38", "send_file")
    assert _has(safety, "P1", "shop/routes.py:28", "/admin/delete")
    assert _has(safety, "P2", "shop/routes.py:23", "str(exc)")
    assert any(loc == "shop/config.py:3" and "debug" in t.lower() for _s, loc, t in safety)
    assert _has(found["fd-performance"], "P2", "shop/db.py:24", "n+1")
    assert _has(
        found["fd-architecture"],
        "P2",
        "shop/db.py:5",
        "import cycle between 2 modules: shop.db -> shop.models -> shop.db",
    )
    correctness = found["fd-correctness"]
    assert any(loc == "shop/db.py:17" for _s, loc, _t in correctness), correctness
    assert any(loc == "shop/db.py:30" for _s, loc, _t in correctness), correctness
    assert any(loc.startswith("shop/routes.py:5") for _s, loc, _t in correctness), correctness
    assert found["fd-game-design"] == []

    output = root.parent / "py-webapp-out"
    for path in output.rglob("*"):
        if path.is_file():
            assert AWS_EXAMPLE_KEY not in path.read_text(), f"secret leaked into {path.name}"
    records = {p.stem: json.loads(p.read_text()) for p in (output / "verdicts").glob("*.json")}
    assert set(records) == set(REVIEW_AGENTS)
    assert records["fd-safety"]["status"] == "NEEDS_ATTENTION"
    shared = channel.read(output / "peer-findings.jsonl").findings
    assert {f.agent for f in shared if f.severity == "blocking"} >= {"fd-safety"}
    assert all(f.severity == "notable" for f in shared if f.agent == "fd-performance")


def test_js_webapp(tmp_path: Path) -> None:
    found = _review(_copy("js-webapp", tmp_path), ["fd-safety", "fd-correctness", "fd-performance"])
    safety = found["fd-safety"]
    assert _has(safety, "P0", "server.js:10", "sql")
    assert _has(safety, "P0", "server.js:15", "exec")
    assert _has(safety, "P0", "server.js:25", "eval")
    assert _has(safety, "P1", "server.js:7", "cors")
    assert _has(safety, "P2", "server.js:17", "stack")
    assert _has(found["fd-performance"], "P2", "lib/users.js:7", "loop")
    assert _has(found["fd-correctness"], "P2", "lib/users.js:14", ".catch")


def test_go_service_with_docker_ci_and_kubernetes(tmp_path: Path) -> None:
    found = _review(_copy("go-service", tmp_path), ["fd-safety", "fd-correctness", "fd-quality"])
    safety = found["fd-safety"]
    assert _has(safety, "P0", "main.go:15", "sql")
    assert _has(safety, "P1", "main.go:32", "insecureskipverify")
    assert _has(safety, "P0", "Dockerfile:2", "db_password")
    assert _has(safety, "P1", ".github/workflows/ci.yml:10", "run")
    assert _has(safety, "P1", "deploy/deployment.yaml:13", "privileged")
    assert _has(found["fd-correctness"], "P2", "main.go:30", "os.open")
    assert _has(found["fd-quality"], "P3", "main.go:13", "get_item")


def test_markdown_plan_with_code_blocks(tmp_path: Path) -> None:
    root = _copy("plan-doc", tmp_path)
    named = _review(root, ["fd-safety"], files=("docs/plan.md",), input_type="file")
    assert _has(named["fd-safety"], "P0", "docs/plan.md:20", "sql")  # the plan itself is what is reviewed
    assert _has(named["fd-safety"], "P0", "docs/plan.md:31", "f-string from parameter `table`")
    found = _review(root, ["fd-safety", "fd-user-product", "fd-resilience"])
    # in a review of the whole tree, a page under docs/ is documentation: its snippets stay below P1
    assert _has(found["fd-safety"], "P2", "docs/plan.md:20", "sql")
    product = found["fd-user-product"]
    assert _has(product, "P2", "docs/plan.md:37", "tbd")
    assert _has(product, "P2", "docs/plan.md:42", "sticky sessions")
    assert _has(product, "P2", "docs/plan.md:6", "ops/runbook.md")
    assert _has(found["fd-resilience"], "P1", "docs/plan.md:1", "rollback")  # a data migration with no way back
    assert not any("architecture.md" in t for _s, _l, t in product)
    report = (root.parent / "plan-doc-out" / "fd-safety.md").read_text()
    assert "Also at: server.js:4" in report
    assert "Also at: tools/migrate.py:4" in report
    assert "token = '${req.query.token}'" in report, "interpolations are evidence, not secrets"


def _write(root: Path, name: str, text: str | bytes) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text if isinstance(text, bytes) else text.encode())


def test_noise_control_fold_ignore_and_disable(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    body = "".join(
        f'def run_{i}(cursor, x):\n    cursor.execute(f"SELECT * FROM t WHERE a = {{x}}")\n\n' for i in range(6)
    )
    body += 'def quiet(cursor, x):\n    cursor.execute(f"SELECT * FROM t WHERE a = {x}")  # fluxdrive: ignore[py-sql-injection]\n'
    body += 'def quiet2(cursor, x):\n    cursor.execute(f"SELECT * FROM t WHERE a = {x}")  # noqa\n'
    body += "import os\nos.system('ls ' + os.environ['HOME'])\n"
    _write(root, "app.py", body)
    config = Config.model_validate({"static": {"max_per_rule": 3, "disabled_rules": ["fluxdrive:py-command-*"]}})
    found = _review(root, ["fd-safety"], config)["fd-safety"]
    sql = [f for f in found if "sql" in f[2].lower()]
    assert len(sql) == 1 and sql[0][2].endswith("(and 5 more places)")
    assert not any("shell" in t.lower() or "os.system" in t for _s, _l, t in found)
    report = (tmp_path / "proj-out" / "fd-safety.md").read_text()
    assert "Other places: app.py:5, app.py:8" in report
    assert "app.py:20" not in report and "app.py:22" not in report


def test_bad_input_binary_non_utf8_and_empty(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    _write(root, "logo.png", b"\x89PNG\r\n\x1a\n\x00\x00binary")
    _write(root, "legacy.py", b"# caf\xe9\nimport os\nos.system('rm -rf ' + os.environ['TARGET'])\n")
    found = _review(root, ["fd-safety"])["fd-safety"]
    assert any(loc == "legacy.py:3" for _s, loc, _t in found)
    report = (tmp_path / "proj-out" / "fd-safety.md").read_text()
    assert "skipped logo.png: binary file" in report
    assert "legacy.py is not valid UTF-8; decoded with replacement characters" in report

    empty = tmp_path / "empty"
    empty.mkdir()
    assert _review(empty, ["fd-quality"]) == {"fd-quality": []}
    text = (tmp_path / "empty-out" / "fd-quality.md").read_text()
    assert "Nothing to review: the input has no readable files." in text


def test_missing_analyzer_is_named_and_the_rest_still_counts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fluxdrive.runtimes.static.analyzers import ruff

    monkeypatch.setattr(ruff, "ruff_executable", lambda: None)
    root = tmp_path / "proj"
    _write(
        root,
        "app.py",
        'import os\n\ndef f(cursor, x):\n    cursor.execute(f"SELECT * FROM t WHERE a = {x}")\n',
    )
    found = _review(root, ["fd-safety", "fd-quality"])
    assert _has(found["fd-safety"], "P0", "app.py:4", "sql")
    report = (tmp_path / "proj-out" / "fd-quality.md").read_text()
    assert "Not run: ruff (ruff is not installed (pip install ruff))" in report
    assert "The verdict covers only the checks that ran." in report


def test_diff_changed_lines_limit_findings(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    _write(
        root,
        "app.py",
        'def a(c, x):\n    c.execute(f"SELECT * FROM t WHERE a = {x}")\n\ndef b(c, x):\n    c.execute(f"SELECT * FROM t WHERE b = {x}")\n',
    )
    found = _review(root, ["fd-safety"], changed_lines={"app.py": frozenset({5})})["fd-safety"]
    assert [loc for _s, loc, _t in found] == ["app.py:5"]


def test_every_hit_has_one_owner_and_enough_rules_ship() -> None:
    ownership = Ownership.from_agents(builtin_agents().values())
    assert ownership.conflicts == ()
    checks = registered_checks()
    assert len(load_rules()) + len(checks) >= 40
    reviewers = [a for a in builtin_agents().values() if a.kind == "review"]
    claimed = {name for agent in reviewers for name in static_section(agent).checks}
    architecture = {"import-cycles", "module-fan-in-out", "oversized-module", "layering-rules"}
    assert claimed - architecture == set(checks), "every check is claimed by exactly the agents that list it"
    tags = {a.name: static_section(a).ast_grep for a in builtin_agents().values() if static_section(a).ast_grep}
    assert {rule.owner_tag for rule in load_rules()} <= {t for ts in tags.values() for t in ts}


def test_cli_agent_run_and_rules_list(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = _copy("js-webapp", tmp_path)
    result = cli("agent", "run", "fd-safety", root, "--output-dir", tmp_path / "out")
    assert result.code == 1, result.err
    assert result.out.startswith("fd-safety: risky (") and str(tmp_path / "out" / "fd-safety.md") in result.out
    assert (
        cli(
            "agent",
            "run",
            "fd-safety",
            root,
            "--output-dir",
            tmp_path / "out",
            "--fail-on",
            "never",
        ).code
        == 0
    )
    research = cli("agent", "run", "git-history", root)
    assert research.code == 2 and "research agent" in research.err
    listing = cli("rules", "list", "--language", "go")
    assert listing.code == 0 and "astgrep:go-" in listing.out
    data = json.loads(cli("rules", "list", "--json").out)
    agents = {row["agent"] for row in data["rules"]}
    assert {
        "fd-safety",
        "fd-correctness",
        "fd-quality",
        "fd-performance",
        "fd-user-product",
    } <= agents


def test_parallel_and_serial_analysis_are_identical(tmp_path: Path) -> None:
    from fluxdrive.runtimes.static.analyzers.base import AnalyzerContext
    from fluxdrive.runtimes.static.parallel import run_per_file
    from fluxdrive.runtimes.static.source import load_sources

    root = _copy("py-webapp", tmp_path)
    clean_copy(FIXTURES / "js-webapp", root / "web")
    clean_copy(FIXTURES / "plan-doc" / "docs", root / "docs")
    names = ["secrets", "patterns", "lizard", "checks"]

    def run(workers: int) -> tuple[dict[str, object], dict[tuple[str, int], set[str]]]:
        loaded = load_sources(root, review_files(root, root), max_bytes=2_000_000)
        context = AnalyzerContext(root, loaded, Config().static)
        outputs = run_per_file(context, names, workers=workers)
        return {n: (o.hits, o.notes, o.error) for n, o in outputs.items()}, context.mask.values

    serial, serial_mask = run(1)
    parallel, parallel_mask = run(2)
    assert parallel == serial
    assert parallel_mask == serial_mask and serial_mask


PEERS = b"\n### Peer Findings Acknowledged"
COMPLETE = b"<!-- flux-drive:complete -->"


def reports_without_peers(out: Path) -> dict[str, bytes]:
    """Each agent's report without its peer acknowledgements ("corroborated: this agent also reports ..."):
    which blocking findings a peer had shared before an agent's checkpoint depends on how the concurrent
    agents were scheduled. The section sits just before the completion marker, so the marker is checked,
    then set aside too."""
    reports = {p.name: p.read_bytes() for p in out.glob("*.md")}
    assert all(text.rstrip().endswith(COMPLETE) for text in reports.values()), reports
    return {name: text.split(PEERS)[0].rstrip().removesuffix(COMPLETE).rstrip() for name, text in reports.items()}


def test_reports_are_byte_identical_across_runs(tmp_path: Path) -> None:
    root = _copy("go-service", tmp_path)
    _review(root, ["fd-safety", "fd-quality"])
    first = reports_without_peers(tmp_path / "go-service-out")
    shutil.rmtree(tmp_path / "go-service-out")
    _review(root, ["fd-safety", "fd-quality"])
    second = reports_without_peers(tmp_path / "go-service-out")
    assert first == second and len(first) == 2
