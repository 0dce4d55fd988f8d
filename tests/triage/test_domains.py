"""Domain detection: weighted scoring, multi-domain, cache, staleness tiers, override (PROTOCOL.md 8)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
import yaml

from fluxdrive.config import Config
from fluxdrive.triage.domains import (
    DomainSignals,
    Observations,
    cache_path,
    detect_cached,
    score_domains,
)
from tests.triage.conftest import git

CONFIG = Config().domains


def test_weighted_score_with_renormalization() -> None:
    index = {
        "full": DomainSignals(
            "full",
            0.2,
            {
                "directories": ("api", "routes"),
                "files": ("openapi.*",),
                "frameworks": ("flask", "django"),
                "keywords": ("endpoint", "router"),
            },
        ),
        "no-frameworks": DomainSignals(
            "no-frameworks", 0.5, {"directories": ("api", "x"), "keywords": ("endpoint", "y")}
        ),
    }
    seen = Observations(
        directories=["api", "api/v1"], files=["openapi.yaml"], dependencies=["flask"], samples=["the endpoint is here"]
    )
    full, partial = sorted(score_domains(seen, CONFIG, index), key=lambda d: d.profile)
    # directories 1/2, files 1/1, frameworks 1/2, keywords 1/2 -> (.3*.5 + .2*1 + .3*.5 + .2*.5) / 1.0
    assert full.confidence == pytest.approx(0.6)
    assert full.matched == {
        "directories": ["api"],
        "files": ["openapi.*"],
        "frameworks": ["flask"],
        "keywords": ["endpoint"],
    }
    # only directories and keywords defined: weights .3 and .2 renormalized
    assert partial.confidence == pytest.approx((0.3 * 0.5 + 0.2 * 0.5) / 0.5)
    assert full.detected and full.primary and partial.detected and not partial.primary


API_PROJECT = {
    "pyproject.toml": '[project]\nname = "shop"\ndependencies = ["fastapi", "uvicorn"]\n',
    "openapi.yaml": "openapi: 3.1.0\n",
    "api/routes.py": "from fastapi import APIRouter\nrouter = APIRouter()\n# endpoint handler for each request and response, with middleware for authentication\n",
    "handlers/users.py": "def handler(request):\n    return response\n",
}
GAME_PROJECT = {
    "project.godot": "config_version=5\n",
    "game/combat/rules.py": "def tick(delta_time):\n    spawn_rate = 3  # feedback_loop and difficulty_curve tuning, behavior_tree\n",
    "game/inventory.py": "state_machine = None\npathfinding = None\n",
    "simulation/world.py": "tick_rate = 60\nfixed_update = True\n",
    "balance.yaml": "damage: 3\n",
    "api/server.py": "def endpoint(request):\n    return response  # router middleware handler\n",
    "routes/admin.py": "# admin routes\n",
    "openapi.yaml": "openapi: 3.1.0\n",
    "pyproject.toml": '[project]\nname = "game"\ndependencies = ["fastapi", "pygame"]\n',
}


def test_detects_web_api_and_multiple_domains(make_project) -> None:  # type: ignore[no-untyped-def]
    api = detect_cached(make_project(API_PROJECT, repository=True, name="api"), CONFIG)
    assert [d.profile for d in api.detected][:1] == ["web-api"] and api.primary is not None
    assert api.primary.profile == "web-api"
    game = detect_cached(make_project(GAME_PROJECT, repository=True, name="game"), CONFIG)
    names = [d.profile for d in game.detected]
    assert names[0] == "game-simulation" and "web-api" in names, names
    assert sum(d.primary for d in game.domains) == 1


def test_fresh_cache_is_used_and_a_manifest_change_makes_it_stale(make_project) -> None:  # type: ignore[no-untyped-def]
    root = make_project(API_PROJECT, repository=True)
    first = detect_cached(root, CONFIG)
    assert first.source == "detected" and cache_path(root).is_file()
    data = yaml.safe_load(cache_path(root).read_text())
    assert set(data) == {"cache_version", "structural_hash", "detected_at", "override", "domains"}
    assert data["domains"][0] == {"profile": "web-api", "confidence": first.primary.confidence, "primary": True}  # type: ignore[union-attr]
    assert detect_cached(root, CONFIG).source == "cache"
    (root / "pyproject.toml").write_text('[project]\nname = "shop"\ndependencies = ["fastapi", "pygame"]\n')
    again = detect_cached(root, CONFIG)
    assert again.source == "detected" and "stale" in again.notes[0]


def test_override_is_never_recomputed(make_project) -> None:  # type: ignore[no-untyped-def]
    root = make_project(API_PROJECT, repository=True)
    detect_cached(root, CONFIG)
    data = yaml.safe_load(cache_path(root).read_text())
    data["override"] = True
    data["domains"] = [{"profile": "game-simulation", "confidence": 1.0, "primary": True}]
    cache_path(root).write_text(yaml.safe_dump(data))
    (root / "pyproject.toml").write_text('[project]\nname = "changed"\n')
    pinned = detect_cached(root, CONFIG)
    assert pinned.source == "override" and [d.profile for d in pinned.detected] == ["game-simulation"]


def test_broken_cache_is_redetected_with_a_note(make_project) -> None:  # type: ignore[no-untyped-def]
    root = make_project(API_PROJECT, repository=True)
    cache_path(root).parent.mkdir(parents=True)
    cache_path(root).write_text("{{{ not yaml")
    result = detect_cached(root, CONFIG)
    assert result.source == "detected" and "unreadable" in result.notes[0]
    assert yaml.safe_load(cache_path(root).read_text())["cache_version"] == 1


def _without_hash(root: Path, detected_at: str) -> None:
    data = yaml.safe_load(cache_path(root).read_text())
    data.pop("structural_hash", None)
    data["detected_at"] = detected_at
    cache_path(root).write_text(yaml.safe_dump(data))


def test_tier_two_git_history_and_tier_three_mtimes(make_project, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = make_project(API_PROJECT, repository=True)
    detect_cached(root, CONFIG)
    _without_hash(root, "2099-01-01T00:00:00Z")
    assert detect_cached(root, CONFIG).source == "cache", "no commit since detection touched structural files"
    _without_hash(root, "2000-01-01T00:00:00Z")
    (root / "pyproject.toml").write_text('[project]\nname = "shop2"\n')
    git(root, "commit", "-qam", "manifest change")
    assert detect_cached(root, CONFIG).source == "detected", "a commit touched the manifest"

    plain = make_project(API_PROJECT, name="plain")  # not a repository: file times decide
    detect_cached(plain, CONFIG)
    _without_hash(plain, "2099-01-01T00:00:00Z")
    assert detect_cached(plain, CONFIG).source == "cache"
    _without_hash(plain, "2000-01-01T00:00:00Z")
    os.utime(plain / "pyproject.toml", (time.time(), time.time()))
    assert detect_cached(plain, CONFIG).source == "detected"


def test_cli_domains_detect(cli, make_project) -> None:  # type: ignore[no-untyped-def]
    root = make_project(API_PROJECT, repository=True)
    result = cli("domains", "detect", root, "--json", "--no-cache")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    first = data["domains"][0]
    assert first["profile"] == "web-api" and first["primary"] and first["matched"]["frameworks"] == ["fastapi"]
    table = cli("domains", "detect", root)
    assert table.out.splitlines()[0].split()[:3] == ["DOMAIN", "CONFIDENCE", "STATE"]
    assert "source: cache" in table.out
    assert cli("domains", "detect", root / "missing").code == 2


def test_cli_domains_set_and_reset(cli, make_project) -> None:  # type: ignore[no-untyped-def]
    root = make_project(API_PROJECT, repository=True)
    pinned = cli("domains", "set", "data-pipeline", "web-api", "--path", root)
    assert pinned.code == 0, pinned.err
    assert (
        pinned.out
        == f"pinned data-pipeline, web-api in {root / '.fluxdrive' / 'domains.yaml'} (primary: data-pipeline)\n"
    )
    detection = detect_cached(root, CONFIG)
    assert detection.source == "override"
    assert [(d.profile, d.primary) for d in detection.detected] == [("data-pipeline", True), ("web-api", False)]
    (root / "requirements.txt").write_text("django\n")  # a structural change does not undo a pin
    assert detect_cached(root, CONFIG).source == "override"
    assert "(pinned by hand)" in cli("domains", "detect", root).out

    wrong = cli("domains", "set", "web-apy", "--path", root)
    assert wrong.code == 2 and "unknown domain 'web-apy'" in wrong.err and "web-api" in wrong.err

    assert cli("domains", "reset", "--path", root).out == f"removed {root / '.fluxdrive' / 'domains.yaml'}\n"
    assert detect_cached(root, CONFIG).source == "detected"
