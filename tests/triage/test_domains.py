"""Domain detection: evidence scoring, multi-domain, cache, staleness tiers, override (PROTOCOL.md 8)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
import yaml

from fluxdrive.config import Config
from fluxdrive.triage.domains import (
    Detection,
    DomainSignals,
    Observations,
    cache_path,
    detect,
    detect_cached,
    load_index,
    observe_layout,
    score_domains,
)
from tests.triage.conftest import git

CONFIG = Config().domains


def test_evidence_score_combines_the_weights_of_what_matched() -> None:
    """Deviation from PROTOCOL.md 8 (see fluxdrive/triage/domains.py): matched signals combine as independent
    evidence, 1 - prod(1 - weight); unmatched signals never lower the score, so long lists do not dilute it."""
    index = {
        "full": DomainSignals(
            "full",
            0.5,
            {
                "directories": ("api", "routes"),
                "files": ("openapi.*",),
                "frameworks": ("flask", "django"),
                "keywords": ("endpoint", "router"),
            },
            {
                "directories": {"api": 0.2, "routes": 0.3},
                "files": {"openapi.*": 0.4},
                "frameworks": {"flask": 0.9, "django": 0.95},
                "keywords": {"endpoint": 0.05, "router": 0.05},
            },
        ),
        "long-list": DomainSignals(
            "long-list", 0.5, {"directories": ("api", *(f"x{n}" for n in range(40))), "keywords": ("endpoint",)}
        ),
    }
    seen = Observations(
        directories=["api", "api/v1"], files=["openapi.yaml"], dependencies=["flask"], samples=["the endpoint is here"]
    )
    full, long_list = sorted(score_domains(seen, CONFIG, index), key=lambda d: d.profile)
    assert full.confidence == pytest.approx(1 - (1 - 0.2) * (1 - 0.4) * (1 - 0.9) * (1 - 0.05), abs=1e-4)
    assert full.matched == {
        "directories": ["api"],
        "files": ["openapi.*"],
        "frameworks": ["flask"],
        "keywords": ["endpoint"],
    }
    assert full.scores["frameworks"] == pytest.approx(0.9) and full.decisive
    # 40 unmatched directory signals cost nothing: default weights (0.15 a directory, 0.03 a keyword)
    assert long_list.confidence == pytest.approx(1 - (1 - 0.15) * (1 - 0.03), abs=1e-4)
    assert full.detected and full.primary and not long_list.detected and not long_list.primary


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
    assert again.source == "detected" and again.notes == []  # refreshing a stale cache is routine: no warning


def test_a_sub_project_manifest_change_makes_the_cache_stale(make_project) -> None:  # type: ignore[no-untyped-def]
    root = make_project(
        {"backend/pyproject.toml": '[project]\nname = "app"\ndependencies = ["fastapi"]\n', "README.md": "# app\n"},
        repository=True,
    )
    assert detect_cached(root, CONFIG).primary.profile == "web-api"  # type: ignore[union-attr]
    assert detect_cached(root, CONFIG).source == "cache"
    (root / "backend" / "pyproject.toml").write_text('[project]\nname = "app"\ndependencies = ["torch"]\n')
    again = detect_cached(root, CONFIG)
    assert again.source == "detected" and again.primary is not None and again.primary.profile == "ml-pipeline"


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


# --------------------------------------------------------------------------
# the recalibrated rules (issue 12): whole components, sub-projects, decisive signals, generic domains


def _detect(make_project, files: dict[str, str], name: str = "project") -> Detection:  # type: ignore[no-untyped-def]
    return detect(make_project(files, name=name), CONFIG)


def _names(detection: Detection) -> list[str]:
    return [d.profile for d in detection.detected]


def test_directory_signals_match_whole_path_components() -> None:
    index = {"t": DomainSignals("t", 0.1, {"directories": ("ui", "ai/behavior")})}
    inside = Observations(directories=["benchsuite", "guide", "build-ai/behaviors"])
    assert score_domains(inside, CONFIG, index)[0].matched == {}, "ui inside benchsuite is no ui/ directory"
    nested = Observations(directories=["src", "src/ui", "game/ai", "game/ai/behavior"])
    assert score_domains(nested, CONFIG, index)[0].matched == {"directories": ["ui", "ai/behavior"]}


def test_ripgrep_like_layout_is_not_a_tui(make_project) -> None:  # type: ignore[no-untyped-def]
    files = {
        "Cargo.toml": '[package]\nname = "rg"\n\n[[bin]]\nname = "rg"\npath = "crates/core/main.rs"\n\n'
        '[dependencies]\nlexopt = "0.3"\n',
        "crates/core/main.rs": "fn main() {}\n",
        "benchsuite/benchsuite.py": "",
        "guide/GUIDE.md": "",
    }
    detection = _detect(make_project, files)
    assert detection.primary is not None and detection.primary.profile == "cli-tool"
    assert "tui-app" not in _names(detection)


@pytest.mark.parametrize(
    ("files", "expected", "framework"),
    [
        (
            {
                "backend/pyproject.toml": '[project]\nname = "app"\ndependencies = ["fastapi[standard]>=0.114", "sqlmodel"]\n',
                "backend/app/api/routes/items.py": "",
                "frontend/package.json": '{"private": true, "dependencies": {"react": "^18"}}',
            },
            "web-api",
            "fastapi",
        ),
        (
            {
                "package.json": '{"private": true, "dependencies": {"react": "^18"}, "devDependencies": {"vite": "5"}}',
                "src-tauri/Cargo.toml": '[package]\nname = "app"\n\n[dependencies]\ntauri = "2"\n',
                "src/App.tsx": "",
            },
            "desktop-tauri",
            "tauri",
        ),
        (
            {
                "settings.gradle.kts": 'include(":app")\n',
                "app/build.gradle.kts": 'plugins {\n    id("com.android.application")\n}\n'
                'dependencies {\n    implementation("androidx.compose.ui:ui:1.6.0")\n}\n',
            },
            "mobile-app",
            "android",
        ),
    ],
    ids=["backend-pyproject", "src-tauri-cargo", "app-build-gradle"],
)
def test_manifests_of_sub_projects_are_read(make_project, files, expected, framework) -> None:  # type: ignore[no-untyped-def]
    detection = _detect(make_project, files)
    assert detection.primary is not None and detection.primary.profile == expected, _names(detection)
    assert framework in detection.primary.matched["frameworks"]
    assert detection.primary.decisive


@pytest.mark.parametrize(
    ("path", "content", "expected"),
    [
        ("project.godot", "config_version=5\n", "game-simulation"),
        ("dbt_project.yml", "name: shop\n", "data-pipeline"),
        ("platformio.ini", "[env:esp32]\nplatform = espressif32\nframework = arduino\n", "embedded-systems"),
        ("src-tauri/tauri.conf.json", "{}", "desktop-tauri"),
        ("app/src/main/AndroidManifest.xml", "<manifest/>", "mobile-app"),
        (".claude-plugin/plugin.json", '{"name": "p"}', "claude-code-plugin"),
        ("west.yml", "manifest: {}\n", "embedded-systems"),
    ],
)
def test_one_decisive_signal_detects_its_domain(make_project, path, content, expected) -> None:  # type: ignore[no-untyped-def]
    detection = _detect(make_project, {path: content, "README.md": "# x\n", "src/notes.txt": ""})
    assert detection.primary is not None and detection.primary.profile == expected, _names(detection)
    assert detection.primary.decisive and detection.primary.confidence >= 0.9


def test_generic_signals_alone_detect_nothing(make_project) -> None:  # type: ignore[no-untyped-def]
    files = {
        "README.md": "# notes\n",
        "CHANGELOG.md": "",
        "docs/guide.md": "",
        "agents/reviewer.md": "",
        "src/thing.txt": "",
        "lib/other.txt": "",
    }
    assert _names(_detect(make_project, files)) == []


def test_a_specific_domain_beats_library_sdk_and_cli_tool(make_project) -> None:  # type: ignore[no-untyped-def]
    files = {
        "pyproject.toml": '[build-system]\nrequires = ["hatchling"]\n\n[project]\nname = "shop"\n'
        'dependencies = ["fastapi", "typer"]\n',
        "src/shop/api/items.py": "from fastapi import APIRouter\nrouter = APIRouter()\n",
        "docs/index.md": "",
        "CHANGELOG.md": "",
        "CONTRIBUTING.md": "",
    }
    detection = _detect(make_project, files)
    assert detection.primary is not None and detection.primary.profile == "web-api"
    assert _names(detection) == ["web-api"], "library-sdk / cli-tool below generic_extra_confidence are not listed"
    library = next(d for d in detection.domains if d.profile == "library-sdk")
    assert library.matched["facts"] == ["library_package"] and not library.detected


def test_library_and_framework_package(make_project) -> None:  # type: ignore[no-untyped-def]
    library = {
        "pyproject.toml": '[build-system]\nrequires = ["hatchling"]\n\n[project]\nname = "httpthing"\n'
        'dependencies = ["urllib3", "idna"]\n',
        "src/httpthing/__init__.py": "def get(url):\n    return url\n",
    }
    detection = _detect(make_project, library, name="lib")
    assert _names(detection) == ["library-sdk"]
    # flask's own repository: its name is a web framework, but it is the framework's library, not a web API
    framework = {
        "pyproject.toml": '[build-system]\nrequires = ["flit_core"]\n\n[project]\nname = "Flask"\n'
        'dependencies = ["werkzeug", "jinja2"]\n',
        "src/flask/__init__.py": "from .app import Flask\n",
        "examples/tutorial/pyproject.toml": '[project]\nname = "flaskr"\ndependencies = ["flask", "django"]\n',
    }
    detection = _detect(make_project, framework, name="flask")
    assert detection.primary is not None and detection.primary.profile == "library-sdk"
    assert detection.primary.matched["facts"] == ["library_package", "framework_package"]
    assert "web-api" not in _names(detection), "examples/ are not read"


def test_transitive_dev_and_imported_dependencies(make_project) -> None:  # type: ignore[no-untyped-def]
    compiled = {
        "requirements.txt": "# uv pip compile requirements.in\nclick==8.1.7\n    # via typer\ntyper==0.12\n"
        "    # via dbt-core\nrequests==2.31\n    # via -r requirements.in\n",
        "go.mod": "module example.com/x\n\nrequire (\n\tgithub.com/gin-gonic/gin v1.9.1 // indirect\n)\n",
    }
    seen = observe_layout(make_project(compiled, name="compiled"))
    assert seen.dependencies == ["requests"], "compiled `# via other` and go `// indirect` entries are transitive"
    dev_only = {
        "package.json": '{"private": true, "devDependencies": {"electron": "30"}}',
        "main.js": "",
    }
    electron = next(d for d in _detect(make_project, dev_only, name="dev").domains if d.profile == "desktop-tauri")
    assert electron.detected and electron.confidence == pytest.approx(0.95 * 0.7, abs=1e-4)
    no_manifest = {"train.py": "import torch\nfrom torch import nn\nfrom model import GPT\n", "model.py": ""}
    detection = _detect(make_project, no_manifest, name="imports")
    assert detection.primary is not None and detection.primary.profile == "ml-pipeline"
    assert detection.primary.matched["frameworks"] == ["torch"]


def test_config_weights_scale_categories(make_project) -> None:  # type: ignore[no-untyped-def]
    root = make_project({"package.json": '{"private": true, "dependencies": {"express": "4"}}'})
    assert _names(detect(root, CONFIG)) == ["web-api"]
    off = CONFIG.model_copy(update={"weight_frameworks": 0.0})
    assert _names(detect(root, off)) == []


SPEC_SIGNALS = {  # PROTOCOL.md 8 / the reference's index.yaml: every one is kept (reference-facts.md 2.2)
    "game-simulation": "game games simulation sim ecs tick storyteller drama narrative combat inventory crafting "
    "procedural procgen worldgen ai/behavior needs mood *.gd *.tscn project.godot *.unity *.uproject game.toml "
    "game.yaml game_config.* balance.yaml balance.json tuning.* godot unity unreal bevy macroquad ggez raylib pygame "
    "love2d phaser pixi tick_rate delta_time fixed_update storyteller drama_manager utility_ai behavior_tree "
    "state_machine navmesh pathfinding procedural_generation death_spiral feedback_loop spawn_rate difficulty_curve",
    "ml-pipeline": "models training inference datasets notebooks experiments features pipelines *.ipynb "
    "requirements.txt setup.py pyproject.toml Pipfile dvc.yaml mlflow.* wandb.* *.onnx *.pt *.h5 *.safetensors "
    "pytorch tensorflow keras scikit-learn huggingface transformers mlflow wandb dvc ray airflow model.train "
    "model.eval optimizer loss_function batch_size epoch learning_rate gradient backpropagation embedding tokenizer "
    "fine_tune hyperparameter",
    "web-api": "api routes controllers handlers middleware endpoints graphql grpc openapi.* swagger.* *.proto "
    "schema.graphql routes.* express fastapi django flask gin echo fiber actix-web axum spring-boot rails nest hono "
    "endpoint middleware request response router handler rest graphql grpc rate_limit authentication authorization",
    "cli-tool": "cmd cli commands subcmd main.go cli.* Cargo.toml cobra clap click argparse commander yargs oclif "
    "bubbletea charmbracelet inquirer subcommand flag argument parse_args cli terminal stdin stdout exit_code",
    "mobile-app": "ios android app screens navigation *.swift *.kt *.dart Podfile build.gradle pubspec.yaml app.json "
    "Info.plist AndroidManifest.xml react-native flutter swiftui uikit jetpack-compose expo capacitor ionic "
    "navigation screen gesture touch push_notification deep_link app_lifecycle offline_first",
    "embedded-systems": "firmware hal drivers bsp rtos *.c *.h Makefile CMakeLists.txt *.ld *.s platformio.ini *.dts "
    "freertos zephyr embassy arduino esp-idf stm32 nrf-sdk mbed interrupt isr dma gpio spi i2c uart volatile "
    "register peripheral firmware bootloader watchdog",
    "library-sdk": "src lib examples docs api package.json Cargo.toml go.mod setup.py pyproject.toml *.gemspec "
    "*.podspec CHANGELOG.md CONTRIBUTING.md public_api export semver breaking_change backward_compatible deprecate "
    "type_definition generic interface trait",
    "data-pipeline": "etl pipeline ingestion transform dags warehouse dbt_project.yml *.sql dagster.* prefect.* "
    "*.parquet *.avro airflow dagster prefect dbt spark flink kafka beam fivetran pipeline etl elt transform "
    "ingestion warehouse schema_evolution backfill idempotent exactly_once at_least_once",
    "claude-code-plugin": ".claude-plugin skills agents commands hooks plugin.json SKILL.md *.md subagent_type "
    "pretooluse posttooluse sessionstart claude_plugin_root askuserquestion frontmatter skill_description",
    "tui-app": "tui ui view component *.go *.rs bubbletea lipgloss bubbles ratatui tui-rs crossterm termion blessed "
    "ink rich textual render update view model msg cmd tea.model tea.cmd widget layout flex border viewport",
    "desktop-tauri": "src-tauri frontend webview tauri.conf.json Cargo.toml *.tsx *.svelte tauri electron wails "
    "neutralinojs invoke tauri_command window webview ipc menu tray system_tray notification file_dialog auto_update",
}


def test_every_spec_signal_is_kept() -> None:
    index = load_index()
    assert set(index) == set(SPEC_SIGNALS)
    for name, words in SPEC_SIGNALS.items():
        kept = {s for signals in index[name].signals.values() for s in signals}
        missing = [w for w in words.split() if w not in kept and w.lower() not in kept]
        assert not missing, (name, missing)
