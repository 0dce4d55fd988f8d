"""The cognitive document checks (decisions, people, resilience, perception, systems) on real documents.

The decorator examples run in test_checks.py; here the checks meet text nobody wrote for them:
a Kubernetes enhancement proposal for a storage migration and five GOV.UK architecture decision
records (sources, commits and licences in each file's header and in data/doc_cognitive/LICENSES.txt),
plus this project's README. Every document goes through the runner the static runtime uses, and each
test pins the hits judged correct and the silence judged right, with the reason next to it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fluxdrive.runtimes.static.checks.engine.registry import registered_checks
from fluxdrive.runtimes.static.checks.engine.runner import run_document_checks

DATA = Path(__file__).resolve().parent / "data" / "doc_cognitive"
README = Path(__file__).resolve().parents[2] / "README.md"
TAGS = {"decisions", "people", "resilience", "perception", "systems"}
MINE = sorted(name for name, spec in registered_checks().items() if spec.tag in TAGS)
PLAN_ONLY = {name for name, spec in registered_checks().items() if spec.tag in TAGS - {"perception"}}


def _document(name: str) -> str:
    """The published text: the provenance comment this repository added on top is removed."""
    text = (DATA / name).read_text(encoding="utf-8")
    return re.sub(r"\A<!--.*?-->\n", "", text, count=1, flags=re.S)


def _hits(path: str, text: str) -> set[tuple[str, int, str]]:
    notes: list[str] = []
    ran = run_document_checks(path, text, MINE, notes, lambda _target: True)
    assert notes == [], notes
    return {(r.spec.name, r.hit.line, r.hit.severity or r.spec.severity) for r in ran}


def test_the_five_areas_register_their_checks() -> None:
    by_tag = {tag: sorted(n for n, s in registered_checks().items() if s.tag == tag) for tag in TAGS}
    assert by_tag == {
        "decisions": ["doc-decision-no-rationale", "doc-decision-single-option", "doc-irreversible-no-exit"],
        "people": ["doc-action-items-unowned", "doc-human-load", "doc-no-owner"],
        "resilience": ["doc-failure-modes-missing", "doc-no-rollback", "doc-recovery-unspecified"],
        "perception": [
            "doc-hedged-requirements",
            "doc-inconsistent-terms",
            "doc-undefined-acronym",
            "doc-unstated-assumptions",
        ],
        "systems": ["doc-metric-no-baseline", "doc-target-no-guardrail", "doc-unbounded-loop"],
    }


# --- kubernetes/enhancements KEP 30: a storage migration design with owners, alternatives and a way back


KEP = "keps/sig-api-machinery/0030-storage-migration.md"


def test_a_complete_migration_design_raises_no_process_findings() -> None:
    # Authors and approvers sit in the front matter, "Alternatives" and "Risks and Mitigations" are
    # sections, and the risks name the rollback: every decisions/people/resilience/systems check is quiet.
    # The two acronym hits are right: "HPAs" (line 48) and "KEP" are never spelled out.
    assert _hits(KEP, _document("kep-0030-storage-migration.md")) == {
        ("doc-undefined-acronym", 48, "P3"),
        ("doc-undefined-acronym", 232, "P3"),
    }


def test_the_same_design_without_its_rollback_and_risks_is_flagged() -> None:
    lines = _document("kep-0030-storage-migration.md").splitlines()
    start = lines.index("### Risks and Mitigations")
    end = lines.index("## Beta Graduation Criteria")
    cut = "\n".join(line for line in lines[:start] + lines[end:] if "Risks and Mitigations" not in line)
    hits = _hits(KEP, cut)
    # Migrating stored objects with no way back is the P1 the check exists for (line 19 is the title).
    assert ("doc-no-rollback", 19, "P1") in hits
    # "We will delete it" (the old script, under Alternatives) removes a file from a repository, which git
    # undoes: not a one-way door. Nothing else changed, so nothing else fires.
    assert hits == {
        ("doc-no-rollback", 19, "P1"),
        ("doc-undefined-acronym", 47, "P3"),
        ("doc-undefined-acronym", 231, "P3"),
    }


# --- alphagov/govuk-aws ADRs


def test_an_adr_that_weighs_two_options_with_reasons_is_quiet() -> None:
    text = _document("govuk-aws-0011-migration-strategy.md")
    assert _hits("docs/architecture/decisions/0011-migration-strategy.md", text) == set()
    # Reopened for review, it still names its alternatives ("Two strategies were considered", "The second option").
    proposed = text.replace("## Status\n\nAccepted", "## Status\n\nProposed")
    assert _hits("docs/architecture/decisions/0011-migration-strategy.md", proposed) == set()


def test_a_pending_adr_with_one_option_is_flagged() -> None:
    path = "docs/architecture/decisions/0013-userdata-provisioning-snippets.md"
    # Status "Pending", a Decision with a single approach, no alternative anywhere: correct, P2.
    assert _hits(path, _document("govuk-aws-0013-userdata-provisioning-snippets.md")) == {
        ("doc-decision-single-option", 26, "P2"),
    }


def test_an_informational_adr_states_no_choice_to_weigh() -> None:
    # Its "Decision" only records the current architecture ("We have outlined the current
    # architecture"): flagging a missing alternative there would be noise.
    path = "docs/architecture/decisions/0036-performance-platform-and-backdrop-architecture.md"
    assert _hits(path, _document("govuk-aws-0036-performance-platform-and-backdrop-architecture.md")) == set()


def test_a_database_move_that_changes_backups_without_a_recovery_target() -> None:
    path = "docs/architecture/decisions/0038-mongo_replacement_by_documentdb.md"
    # "the relevant database backup mechanism needs to be updated" with no RPO/RTO or tested restore: a fair P2
    # for a database migration. It is an approved record (no alternatives finding), and "migrating" here is a
    # direction, not a rollout plan, so no rollback finding either.
    assert _hits(path, _document("govuk-aws-0038-mongo_replacement_by_documentdb.md")) == {
        ("doc-recovery-unspecified", 69, "P2"),
    }


# --- alphagov/govuk-infrastructure ADR 13


def test_follow_ups_without_owners_in_an_accepted_adr() -> None:
    path = "docs/architecture/decisions/0013-expose-external-metrics-for-hpa.md"
    # Three follow-ups, none with a name: correct. "Horizontal Pod Autoscaler" in the title is not an
    # automatic reaction the ADR adds, and the risks it lists are in its Consequences.
    assert _hits(path, _document("govuk-infrastructure-0013-expose-external-metrics-for-hpa.md")) == {
        ("doc-action-items-unowned", 71, "P2"),
    }


# --- this project's README: not a plan, so only the perception checks may speak, and rarely


def test_readme_is_nearly_silent() -> None:
    hits = _hits("README.md", README.read_text(encoding="utf-8"))
    assert not {h for h in hits if h[0] in PLAN_ONLY}, hits
    assert len(hits) <= 5, hits


@pytest.mark.parametrize(
    ("title", "kind_words"),
    [("# fluxdrive", "README"), ("# Changelog", "CHANGELOG.md")],
)
def test_plan_checks_ignore_readmes_and_changelogs(title: str, kind_words: str) -> None:
    text = (
        f"{title}\n\n## 2.0\n\n- We decided to drop Python 3.9 support.\n- The `--legacy` flag will be deprecated.\n"
        "- Failed uploads are retried automatically.\n- Reduce startup time by 30%.\n"
    )
    assert {h for h in _hits(kind_words, text) if h[0] in PLAN_ONLY} == set()
