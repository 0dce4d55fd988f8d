"""Knowledge in a real review: entries reach the prompts, the static agents' re-discovery confirms, decay archives."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from fluxdrive.api import ReviewOptions, run_review
from fluxdrive.cli.examples import clean_copy
from fluxdrive.knowledge import Entry, Store
from tests.conftest import run_fluxdrive
from tests.triage.conftest import git

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "projects" / "py-webapp"
OLD = date(2026, 1, 5)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    clean_copy(FIXTURE, root)
    store = Store(root / ".fluxdrive" / "knowledge")
    store.save(
        Entry(
            id="sql-in-find-user",
            title="SQL built with '%' formatting reaches cur.execute() in find_user()",
            heuristic="User names are formatted into SQL in the data layer; queries must take parameters.",
            evidence=("shop/db.py:15",),
            verify=("Open shop/db.py:15 and check that cur.execute() gets parameters.",),
            last_confirmed=OLD,
            agents=("fd-safety",),
            reviews_unconfirmed=3,
        )
    )
    store.save(
        Entry(
            id="orders-unpaginated",
            title="The orders listing in shop routes returns every order at once",
            heuristic="Listing endpoints in shop/routes.py return whole tables; page them.",
            evidence=("shop/routes.py:30",),
            verify=("Call the orders endpoint with many orders and check it pages.",),
            last_confirmed=OLD,
            reviews_unconfirmed=9,
        )
    )
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


def test_a_review_uses_confirms_and_decays_knowledge(project: Path) -> None:
    run = run_review(project, ReviewOptions(yes=True, expand="none", cwd=project))

    assert run.synthesis is not None and run.manifest is not None
    prompt = (run.output_dir / "prompts" / "fd-safety.md").read_text()
    knowledge = prompt.split("## Project knowledge", 1)[1]
    assert "**sql-in-find-user**" in knowledge and "Last confirmed: 2026-01-05 (independent)" in knowledge

    store = Store.load(project / ".fluxdrive" / "knowledge")
    refreshed = store.active["sql-in-find-user"]
    # the static fd-safety cannot be primed: its re-discovery is independent
    assert refreshed.last_confirmed == date.today() and refreshed.reviews_unconfirmed == 0
    assert "orders-unpaginated" in store.archived and "orders-unpaginated" not in store.active
    assert (project / ".fluxdrive" / "knowledge" / "archive" / "orders-unpaginated.md").is_file()

    record = json.loads((run.output_dir / "run.json").read_text())["knowledge"]
    assert record["refreshed"] == ["sql-in-find-user"] and record["archived"] == ["orders-unpaginated"]
    assert "sql-in-find-user" in record["injected"]["fd-safety"]
    assert any(n.startswith("Knowledge: 1 confirmed independently") for n in run.synthesis.info)
    assert not any(n.startswith("Knowledge:") for n in run.synthesis.notes)  # information, not a warning


def test_knowledge_commands(project: Path) -> None:
    listed = run_fluxdrive("knowledge", "list", cwd=project)
    assert listed.code == 0 and "orders-unpaginated  active" in listed.out and "9/10" in listed.out

    assert run_fluxdrive("knowledge", "confirm", "orders-unpaginated", cwd=project).code == 0
    entry = json.loads(run_fluxdrive("knowledge", "list", "--json", cwd=project).out)["entries"][0]
    assert entry["id"] == "orders-unpaginated" and entry["reviews_unconfirmed"] == 0
    assert entry["last_confirmed"] == date.today().isoformat()

    shown = run_fluxdrive("knowledge", "show", "sql-in-find-user", cwd=project)
    assert shown.out.startswith("---\ntitle: SQL built") and "Verify:\n- Open shop/db.py:15" in shown.out

    assert run_fluxdrive("knowledge", "retract", "sql-in-find-user", cwd=project).code == 0
    missing = run_fluxdrive("knowledge", "confirm", "sql-in-find-user", cwd=project)
    assert missing.code == 2 and missing.err.startswith(
        "fluxdrive: error: no active knowledge entry 'sql-in-find-user'"
    )
    assert not (project / ".fluxdrive" / "knowledge" / "sql-in-find-user.md").exists()
