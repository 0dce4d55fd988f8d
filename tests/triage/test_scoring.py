"""Scoring and selection rules (PROTOCOL.md section 3), each on its own.

Rules that depend on the input run the real pipeline on small real
projects; the selection arithmetic is exercised on score records directly.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from fluxdrive.config import load_config
from fluxdrive.config.model import Config
from fluxdrive.runs.history import open_history, record_feedback, trust_multiplier
from fluxdrive.triage import Triage, triage_target
from fluxdrive.triage.engine import dumps
from fluxdrive.triage.profile import DiffStats, InputProfile
from fluxdrive.triage.scoring import AgentScore, Ceiling, Overrides, assign, base_score, ceiling, stage1_size
from fluxdrive.workspace import resolve_target
from tests.conftest import run_fluxdrive

Make = Callable[..., Path]


def _triage(root: Path, target: str | None = None, *, diff_ref: str | None = None) -> Triage:
    resolved = resolve_target(target, diff_ref=diff_ref, cwd=root)
    return triage_target(resolved, load_config(root).config)


def _agent(result: Triage, name: str) -> AgentScore:
    return next(a for a in result.agents if a.name == name)


def _plan(*sections: tuple[str, int, str]) -> str:
    """A markdown plan: (title, lines, first line) per section, padded with neutral lines."""
    out = ["# Plan", ""]
    for title, lines, first in sections:
        out += [f"## {title}", "", first]
        out += [f"Item {n} is tracked on the board." for n in range(lines - 3)]
    return "\n".join(out) + "\n"


@pytest.mark.parametrize(
    ("share", "expected"),
    [(0.0, 0), (0.001, 1), (0.099, 1), (0.10, 2), (0.30, 2), (0.3001, 3), (1.0, 3)],
)
def test_base_score_thresholds(share: float, expected: int) -> None:
    assert base_score(share, Config()) == expected


def test_base_score_follows_the_matching_share(make_project: Make) -> None:
    # 100 lines of sections; performance is the topic of 5, 20 or 40 of them.
    for lines, expected in ((5, 1), (20, 2), (40, 3)):
        text = _plan(("Latency budget", lines, "Latency must stay low."), ("Other", 100 - lines, "Nothing."))
        root = make_project({"plan.md": text}, name=f"p{lines}")
        record = _agent(_triage(root, "plan.md"), "fd-performance")
        assert record.base_score == expected, (lines, record.share)


def test_base_zero_is_absolute(make_project: Make) -> None:
    """A project agent gets +1 project and +1 domain-agent bonus - but not when nothing is theirs."""
    agent = (
        """---
name: billing-rules
kind: review
prefix: BR
description: Invoicing rules.
domains: [web-api]
concerns: [invoice, vat]
prefilter:
  always: true
---
"""
        + "Review invoicing: totals, VAT rounding and credit notes, with the file and line of each problem. " * 3
    )
    root = make_project(
        {
            ".fluxdrive/agents/billing-rules.md": agent,
            "CLAUDE.md": "# Notes\n",
            "plan.md": _plan(("Authentication", 20, "Tokens expire after an hour.")),
        },
        repository=True,
    )
    result = _triage(root, "plan.md")
    record = _agent(result, "billing-rules")
    assert (record.base_score, record.project_bonus, record.domain_agent_bonus, record.final_score) == (0, 0, 0, 0.0)
    assert record.stage is None
    assert result.ceiling.total > len([a for a in result.agents if a.stage in (1, 2)]), "slots were left"
    # The gate can still add it by hand, with a custom score.
    result = result.with_overrides(result.overrides.add("billing-rules", 2.5))
    assert _agent(result, "billing-rules").stage in (1, 2)


def test_prefilter_runs_before_scoring_and_matches_plurals(make_project: Make) -> None:
    quiet = make_project({"plan.md": _plan(("Goals", 12, "Ship the first version."))}, name="quiet")
    record = _agent(_triage(quiet, "plan.md"), "fd-correctness")
    assert record.prefiltered and record.base_score == 0
    assert record.rationale.startswith("filtered: the input never mentions")
    busy = make_project({"plan.md": _plan(("Goals", 12, "Both writes happen in transactions."))}, name="busy")
    record = _agent(_triage(busy, "plan.md"), "fd-correctness")
    assert not record.prefiltered and record.base_score == 3, record.matched


def test_project_bonus_needs_project_docs(make_project: Make) -> None:
    text = _plan(("Service layout", 20, "The architecture has three layers."))
    bare = make_project({"plan.md": text}, name="bare")
    documented = make_project({"plan.md": text, "AGENTS.md": "# Agents\n"}, name="documented")
    configured = make_project({"plan.md": text, ".fluxdrive/config.toml": "[scoring]\n"}, name="configured")
    assert _agent(_triage(bare, "plan.md"), "fd-architecture").project_bonus == 0
    assert _agent(_triage(documented, "plan.md"), "fd-architecture").project_bonus == 1
    assert _agent(_triage(configured, "plan.md"), "fd-architecture").project_bonus == 1


def test_trust_from_recorded_feedback_scales_the_score(make_project: Make, tmp_path: Path) -> None:
    root = make_project(
        {"CLAUDE.md": "# Notes\n", "plan.md": _plan(("Service layout", 20, "The architecture has three layers."))},
        repository=True,
    )
    findings = root / "findings.json"
    findings.write_text(json.dumps({"findings": [{"id": "P1-1", "agents": ["fd-architecture"]}]}))
    before = _agent(_triage(root, "plan.md"), "fd-architecture")
    assert (before.trust_multiplier, before.final_score) == (1.0, 4.0)

    done = run_fluxdrive("feedback", "discard", findings, "P1-1", cwd=root)
    assert done.code == 0, done.err
    assert done.out == f"discarded P1-1 (fd-architecture trust 0.95) in {root.resolve()}\n"
    after = _agent(_triage(root, "plan.md"), "fd-architecture")
    assert after.trust_multiplier == 0.9545, "one discard is not evidence"
    assert after.final_score == 3.82 and after.stage == 1, "and it does not drop the agent"
    assert "x0.95 trust" in after.rationale

    project = str(root.resolve())
    with open_history() as connection:  # the database the CLI wrote, under the test's XDG_DATA_HOME
        for _ in range(19):
            record_feedback(connection, agents=["fd-architecture"], project=project, finding_id="P1-1", accepted=False)
    distrusted = _agent(_triage(root, "plan.md"), "fd-architecture")
    assert distrusted.trust_multiplier == trust_multiplier(0, 20, Config().scoring) == 0.6667
    assert distrusted.final_score == 2.67, "twenty discards out of twenty cost a third, never more than half"

    for _ in range(3):
        assert run_fluxdrive("feedback", "accept", findings, "P1-1", cwd=root).code == 0
    recovered = _agent(_triage(root, "plan.md"), "fd-architecture")
    assert recovered.trust_multiplier == trust_multiplier(3, 23, Config().scoring) == 0.697
    assert recovered.final_score > distrusted.final_score


@pytest.mark.parametrize(
    ("accepted", "total", "expected"),
    [(0, 0, 1.0), (0, 1, 0.9545), (1, 1, 1.0), (9, 10, 0.975), (5, 10, 0.875), (0, 10, 0.75), (0, 100, 0.5455)],
)
def test_trust_needs_evidence(accepted: int, total: int, expected: float) -> None:
    assert trust_multiplier(accepted, total, Config().scoring) == expected


def test_feedback_bad_input_is_one_clear_line(tmp_path: Path) -> None:
    findings = tmp_path / "findings.json"
    findings.write_text(json.dumps({"findings": [{"id": "P1-1", "agents": ["fd-safety"]}]}))
    unknown = run_fluxdrive("feedback", "accept", findings, "P0-9", cwd=tmp_path)
    assert unknown.code == 2
    assert unknown.err == f"fluxdrive: error: no finding 'P0-9' in {findings} (hint: ids there: P1-1)\n"
    findings.write_text("[1, 2]")
    wrong = run_fluxdrive("feedback", "accept", findings, "P1-1", cwd=tmp_path)
    assert (wrong.code, wrong.err.count("\n"), "Traceback" in wrong.err) == (2, 1, False)
    assert "is not a fluxdrive findings.json" in wrong.err
    findings.write_text("{not json")
    broken = run_fluxdrive("feedback", "discard", findings, "P1-1", cwd=tmp_path)
    assert broken.code == 2 and "is not valid JSON" in broken.err


def _profile(kind: str, changed: int = 0) -> InputProfile:
    profile = InputProfile(kind=kind, label="x", path=None, root=".")
    if kind == "diff":
        profile.diff = DiffStats(added=changed)
    return profile


@pytest.mark.parametrize(
    ("kind", "changed", "domains", "expected"),
    [
        ("file", 0, 0, (4, 0, 0, 4)),
        ("document", 0, 1, (4, 0, 1, 5)),
        ("diff", 499, 1, (4, 1, 1, 6)),
        ("diff", 500, 2, (4, 2, 2, 8)),
        ("directory", 0, 3, (4, 3, 2, 9)),
    ],
)
def test_ceiling(kind: str, changed: int, domains: int, expected: tuple[int, int, int, int]) -> None:
    limit = ceiling(_profile(kind, changed), domains, Config())
    assert (limit.base, limit.scope, limit.domains, limit.total) == expected


def test_ceiling_is_capped() -> None:
    config = Config.model_validate({"ceiling": {"base": 8}})
    assert ceiling(_profile("directory"), 2, config).total == 10


@pytest.mark.parametrize(
    ("total", "selected", "expected"),
    [(4, 4, 2), (5, 5, 2), (6, 5, 3), (7, 7, 3), (10, 10, 4), (10, 3, 2), (10, 2, 2), (10, 1, 1)],
)
def test_stage1_size(total: int, selected: int, expected: int) -> None:
    assert stage1_size(Ceiling(4, 0, 0, total), selected, Config()) == expected


def test_stage1_never_exceeds_five() -> None:
    config = Config.model_validate({"ceiling": {"base": 15, "max": 20}})
    assert stage1_size(Ceiling(15, 3, 2, 20), 20, config) == 5


def _records(*rows: tuple[str, str, float]) -> list[AgentScore]:
    return [
        AgentScore(name, category, base_score=max(1, min(3, int(score))), final_score=score)
        for name, category, score in rows
    ]


def _stage_map(records: list[AgentScore]) -> dict[str, int | str | None]:
    return {r.name: r.stage for r in records}


def test_ties_go_to_project_then_builtin_then_cross_model_then_name() -> None:
    records = _records(
        ("zz-model", "cross-model", 5), ("fd-b", "builtin", 5), ("fd-a", "builtin", 5), ("mine", "project", 5)
    )
    assign(records, Ceiling(4, 0, 0, 4), Config())
    assert [r.name for r in records] == ["fd-a", "fd-b", "mine", "zz-model"], "reported by score, then name"
    assert _stage_map(records) == {"mine": 1, "fd-a": 1, "fd-b": 2, "zz-model": 2}


def test_selection_order_ceiling_and_pool() -> None:
    records = _records(
        ("a3", "builtin", 3),
        ("b3", "builtin", 3.5),
        ("c2", "builtin", 2),
        ("d2", "builtin", 2.4),
        ("e1", "builtin", 1.9),
    )
    assign(records, Ceiling(4, 0, -1, 3), Config())
    # Score >= 3 first, then >= 2 while slots remain; the rest >= 2 is the pool; 1.9 is neither.
    assert _stage_map(records) == {"b3": 1, "a3": 1, "d2": 2, "c2": "pool", "e1": None}


def test_thin_section_brings_in_a_tangential_agent(make_project: Make) -> None:
    text = "# Plan\n\n## Goals\n\n" + "".join(f"Goal {n} is written down here.\n" for n in range(80))
    text += "\n## Caching\n\nWe will add a cache later.\n"
    text += (
        "\n## Access\n\n" + "".join(f"Step {n} of the rollout.\n" for n in range(4)) + "A password is never logged.\n"
    )
    root = make_project({"plan.md": text})
    config = load_config(root).config
    config = config.model_copy(update={"selection": config.selection.model_copy(update={"min_agents": 1})})
    result = triage_target(resolve_target("plan.md", cwd=root), config)  # else the minimum of 2 adds fd-safety
    performance, safety = _agent(result, "fd-performance"), _agent(result, "fd-safety")
    assert (performance.base_score, performance.final_score, performance.thin_sections) == (1, 1.0, ["Caching"])
    assert performance.stage in (1, 2), "a score-1 agent covering a thin section takes a free slot"
    assert (safety.base_score, safety.final_score, safety.thin_sections) == (1, 1.0, [])
    assert safety.stage is None, "a score-1 agent without a thin section does not"


def test_forced_stage1_and_overlap_demotion() -> None:
    records = _records(
        ("fd-a", "builtin", 6), ("fd-b", "builtin", 5), ("fd-c", "builtin", 4), ("fd-safety", "builtin", 2)
    )
    records[3].forced_stage1 = True
    assign(records, Ceiling(4, 0, 0, 4), Config())
    assert _stage_map(records) == {"fd-a": 1, "fd-b": 2, "fd-c": 2, "fd-safety": 1}

    records = _records(
        ("fd-safety", "builtin", 6), ("auth-guard", "project", 5), ("fd-c", "builtin", 5), ("fd-d", "builtin", 4)
    )
    assign(records, Ceiling(4, 0, 0, 4), Config(), overlaps={"auth-guard": ["fd-safety"]})
    # The project agent covers fd-safety's ground: the built-in one still runs, in Stage 2.
    assert _stage_map(records) == {"fd-safety": 2, "auth-guard": 1, "fd-c": 1, "fd-d": 2}


def test_gate_overrides_win_over_scores() -> None:
    records = _records(("fd-a", "builtin", 6), ("fd-b", "builtin", 5), ("fd-c", "builtin", 4), ("fd-d", "builtin", 3))
    overrides = Overrides(promoted=frozenset({"fd-d"}), demoted=frozenset({"fd-a"}), removed=frozenset({"fd-b"}))
    assign(records, Ceiling(4, 0, 0, 4), Config(), overrides)
    assert _stage_map(records) == {"fd-a": 2, "fd-b": None, "fd-c": 1, "fd-d": 1}


def test_security_critical_path_makes_safety_core_and_stage1(make_project: Make) -> None:
    root = make_project(
        {"app.py": "def main():\n    return 1\n", "hooks/pre-tool.sh": "#!/bin/sh\nexit 0\n"}, repository=True
    )
    (root / "hooks" / "pre-tool.sh").write_text("#!/bin/sh\necho checked\nexit 0\n")
    (root / "app.py").write_text("def main():\n    return 2\n")
    result = _triage(root, diff_ref="HEAD")
    safety = _agent(result, "fd-safety")
    assert (safety.base_score, safety.forced_stage1, safety.stage) == (3, True, 1)
    assert "touches a security-critical path" in safety.rationale


def test_diff_prefilter_uses_routing_patterns(make_project: Make) -> None:
    root = make_project({"src/render.py": "def draw(items):\n    return items\n"}, repository=True)
    (root / "src" / "render.py").write_text("def draw(items):\n    for item in items:\n        yield item\n")
    result = _triage(root, diff_ref="HEAD")
    # No hunk or path of theirs: filtered. Performance has the path (render*) and `for `.
    assert {a.name for a in result.agents if a.prefiltered} >= {"fd-correctness", "fd-safety", "fd-game-design"}
    performance = _agent(result, "fd-performance")
    assert not performance.prefiltered and performance.base_score == 3


def test_triage_is_deterministic(make_project: Make) -> None:
    files = {f"pkg/mod{n}.py": f"import json\n\n\ndef f{n}(x):\n    return json.dumps(x)\n" for n in range(30)}
    root = make_project({**files, "README.md": "# Tool\n"}, repository=True)
    runs = [json.loads(dumps(_triage(root, "."))) for _ in range(3)]
    # The first run detects domains and caches them; the others read the cache - and decide the same.
    assert [run.pop("domain_source") for run in runs] == ["detected", "cache", "cache"]
    assert runs[0] == runs[1] == runs[2]
