"""Synthesis (PROTOCOL.md 5 and 10) on realistic agent reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fluxdrive.cli.examples import clean_copy
from fluxdrive.config import Config
from fluxdrive.contracts import IndexEntry, render_index, write_agent_output, write_error_stub
from fluxdrive.errors import InputError, ReviewError
from fluxdrive.synthesis import Finding, Synthesis, synthesize

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "agent-outputs"


def _copy(name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    clean_copy(FIXTURES / name, target)
    return target


def _at(result: Synthesis, location: str) -> list[Finding]:
    return [f for f in result.findings if location in f.locations]


def test_canonical_run_applies_every_dedup_rule(tmp_path: Path) -> None:
    result = synthesize(_copy("canonical", tmp_path))
    assert result.validation_line == "7/7 agents returned a valid Findings Index"
    assert result.verdict == "risky"
    sql, index = sorted(_at(result, "shop/db.py:15"), key=lambda f: f.severity)
    # rule 1 + rule 4: one finding, both agents credited, the most severe rating kept
    assert sql.agents == ["fd-correctness", "fd-safety"]
    assert sql.severity == "P0" and sql.id == "P0-1"
    assert sql.severity_conflict == {"fd-correctness": "P1", "fd-safety": "P0"}
    assert set(sql.descriptions) == {"fd-correctness", "fd-safety"}
    assert (sql.convergence, sql.population, sql.confidence) == (2, 7, "medium")
    # rule 2: a different issue at the same place is kept apart and linked
    assert index.agents == ["fd-performance"]
    assert index.co_located_with == [sql.id] and sql.co_located_with == [index.id]
    # rule 3: the same issue in two places, cross-referenced
    (config_debug,) = _at(result, "shop/config.py:3")
    (routes_debug,) = _at(result, "shop/routes.py:58")
    assert routes_debug.id in config_debug.cross_references and config_debug.id in routes_debug.cross_references
    # rule 5: two different fixes for one finding are both kept, attributed
    (secret,) = _at(result, "shop/config.py:4")
    assert secret.agents == ["fd-quality", "fd-safety"]
    assert secret.recommendations is not None
    assert "SHOP_SECRET_KEY" in secret.recommendations["fd-safety"]
    assert "instance/config.py" in secret.recommendations["fd-quality"]
    kinds = {(c.kind, c.finding) for c in result.conflicts}
    assert ("severity", sql.id) in kinds and ("recommendation", secret.id) in kinds


def test_ids_are_ordered_by_severity_convergence_and_title(tmp_path: Path) -> None:
    result = synthesize(_copy("canonical", tmp_path))
    for severity in ("P0", "P1", "P2", "P3"):
        group = [f for f in result.findings if f.severity == severity]
        assert [f.id for f in group] == [f"{severity}-{n}" for n in range(1, len(group) + 1)]
        keys = [(-f.convergence, f.title.lower()) for f in group]
        assert keys == sorted(keys)
    assert [i.id for i in result.improvements] == [f"IMP-{n}" for n in range(1, len(result.improvements) + 1)]


def test_timeline_adjustments_disagreements_and_contradictions(tmp_path: Path) -> None:
    import yaml

    expected = yaml.safe_load((FIXTURES / "expected.yaml").read_text())["timeline_expectations"]
    result = synthesize(_copy("timeline", tmp_path))
    events = {(e.kind, e.agent, e.blocking_agent, e.location) for e in result.timeline.events}
    want = {("adjustment", *row) for row in expected["acknowledged"]}
    want |= {("contradiction", *row) for row in expected["contradictions"]}
    want |= {("disagreement", *row) for row in expected["disagreements"]}
    assert events == want
    (sql,) = [f for f in _at(result, "shop/db.py:15") if "injection" in f.title.lower()]
    assert sql.discovered_by == "fd-safety"
    assert sql.acknowledged_by == ["fd-architecture", "fd-correctness", "fd-performance"]
    assert sql.confidence == "high", "a corroborated finding gains a confidence level"
    assert [c.kind for c in result.conflicts].count("contradiction") == 1


def test_mixed_outputs_validation_and_population(tmp_path: Path) -> None:
    result = synthesize(_copy("variants", tmp_path))
    outputs = result.outputs
    assert outputs["fd-game-design"].failed and outputs["oracle-council"].failed
    assert outputs["fd-decisions"].failed and outputs["fd-people"].failed
    assert outputs["fd-v2-performance"].partial and not outputs["fd-v2-performance"].completed
    assert result.validation_line.startswith(
        f"{sum(1 for o in outputs.values() if o.status.value == 'valid' and not o.partial)}/23 agents"
    )
    assert "failed" in result.validation_line and "partial" in result.validation_line
    population = len(result.agents_completed)
    assert all(f.population <= population for f in result.findings)
    partial = [f for f in result.findings if f.partial]
    assert partial
    for finding in partial:  # a partial agent is credited but never counted in N
        assert finding.convergence == sum(1 for a in finding.agents if outputs[a].completed)


def _report(directory: Path, agent: str, prefix: str, *rows: tuple[str, str, str, str]) -> None:
    entries = [IndexEntry(s, f"{prefix}-{n:03d}", sec, t, loc) for n, (s, sec, t, loc) in enumerate(rows, start=1)]  # type: ignore[arg-type]
    write_agent_output(directory, agent, render_index(entries))


def test_run_json_slices_early_stop_and_provenance(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    _report(
        run, "fd-safety", "SF", ("P0", "auth.py", "Password compared with == allows timing attacks", "src/auth.py:10")
    )
    _report(
        run, "fd-quality", "QS", ("P2", "auth.py", "Password compared with == allows timing attacks", "src/auth.py:10")
    )
    _report(run, "fd-performance", "PF", ("P1", "db.py", "Query inside the loop over orders", "src/db.py:5"))
    manifest = {
        "schema_version": 1,
        "run_id": "r1",
        "input": {"path": "src/", "type": "directory"},
        "stages": [
            {"stage": 1, "agents": ["fd-safety", "fd-quality", "fd-performance"]},
            {"stage": 2, "agents": ["fd-correctness"], "launched": False},
        ],
        "early_stop": True,
        "content_routing_active": True,
        "agents": {
            "fd-safety": {
                "stage": 1,
                "provenance": {"provider": "anthropic", "model_family": "claude", "model_id": "claude-x"},
                "slice": {"mode": "sliced", "files": ["src/auth.py"]},
            },
            "fd-quality": {
                "stage": 1,
                "provenance": {"provider": "openai", "model_family": "gpt", "model_id": "gpt-x"},
                "slice": {"mode": "full"},
            },
            "fd-performance": {
                "stage": 1,
                "provenance": {"provider": "openai", "model_family": "gpt", "model_id": "gpt-x"},
                "slice": {"mode": "sliced", "files": ["src/db.py"]},
            },
        },
    }
    (run / "run.json").write_text(json.dumps(manifest))
    result = synthesize(run)
    assert result.early_stop and result.skipped_agents == ["fd-correctness"]
    assert result.content_routing_active and result.input == "src/" and result.input_type == "directory"
    (timing,) = _at(result, "src/auth.py:10")
    assert (timing.convergence, timing.population) == (2, 2), "fd-performance never saw auth.py"
    assert timing.cross_family_convergence == 2
    assert timing.weighted_convergence == pytest.approx(1 + 1.5)
    (loop,) = _at(result, "src/db.py:5")
    assert (loop.convergence, loop.population) == (1, 2)
    assert loop.verification_recommended, "single-source P1 from a family outside the top tier"
    config = Config.model_validate({"synthesis": {"top_tier_families": ["gpt"]}})
    assert not synthesize(run, config).findings[-1].verification_recommended


def test_partial_md_and_dot_partial_recovery(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    _report(run, "fd-safety", "SF", ("P1", "a.py", "Token logged at info level", "a.py:3"))
    (run / "fd-quality.md.partial").write_text(
        '### Findings Index\n- P2 | QS-001 | "a.py" | Long function does three jobs | a.py:9\n- P2 | QS-0'
    )
    (run / "fd-correctness.md.partial").write_text("")
    (run / "run.json").write_text(
        json.dumps(
            {"stages": [{"stage": 1, "agents": ["fd-safety", "fd-quality", "fd-correctness", "fd-architecture"]}]}
        )
    )
    result = synthesize(run)
    assert result.outputs["fd-quality"].partial and result.agents_partial == ["fd-quality"]
    assert result.outputs["fd-correctness"].failed and result.outputs["fd-architecture"].failed
    assert "no report" in result.outputs["fd-architecture"].reason
    (long_function,) = [f for f in result.findings if "Long function" in f.title]
    assert long_function.partial and long_function.convergence == 0 and long_function.population == 1
    assert not (run / "fd-quality.md").exists(), "synthesis never rewrites agent files"


def test_verdict_is_error_when_no_agent_completed(tmp_path: Path) -> None:
    write_error_stub(tmp_path, "fd-safety", "timed out")
    write_error_stub(tmp_path, "fd-quality", "crashed")
    result = synthesize(tmp_path)
    assert result.verdict == "error" and result.findings == []
    assert result.validation_line == "0/2 agents returned a valid Findings Index, 2 failed"


def test_bad_input(tmp_path: Path) -> None:
    with pytest.raises(InputError):
        synthesize(tmp_path / "missing")
    with pytest.raises(ReviewError):
        synthesize(tmp_path)
    run = tmp_path / "run"
    run.mkdir()
    _report(run, "fd-safety", "SF", ("P1", "a.py", "Token logged at info level", "a.py:3"))
    (run / "fd-safety.0123456789abcdef.md").write_text("### Findings Index\nVerdict: safe\n")
    (run / "fd-quality.md").write_bytes(
        b'### Findings Index\n- P2 | QS-001 | "a.py" | Name \xff\xfe unclear | a.py:4\nVerdict: safe\n'
    )
    (run / "run.json").write_text("{not json")
    (run / "peer-findings.jsonl").write_text('{"severity": "blocking"\n')
    big = run / "fd-architecture.md"
    with big.open("w") as handle:
        handle.write('### Findings Index\n- P2 | AR-001 | "core" | God module | core.py:1\nVerdict: safe\n\n')
        chunk = "lorem ipsum dolor sit amet " * 40 + "\n"
        for _ in range(50_000):
            handle.write(chunk)
    result = synthesize(run)
    assert any("2 files claim agent fd-safety" in n for n in result.notes)
    assert any(n.startswith("run.json ignored") for n in result.notes)
    assert any("peer-findings.jsonl" in n for n in result.notes)
    assert result.outputs["fd-quality"].completed
    assert [f.title for f in _at(result, "core.py:1")] == ["God module"]


def test_same_inputs_same_findings(tmp_path: Path) -> None:
    from fluxdrive.reports import render_json

    first = json.loads(render_json(synthesize(_copy("canonical", tmp_path))))
    second = json.loads(render_json(synthesize(tmp_path / "canonical")))
    for document in (first, second):
        document.pop("synthesis_timestamp")
        document.pop("reviewed")
    assert first == second
