"""Layered configuration: precedence, sources, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fluxdrive.config import Config, load_config
from fluxdrive.errors import ConfigError


def _project(tmp_path: Path, text: str) -> Path:
    (tmp_path / ".fluxdrive").mkdir(exist_ok=True)
    (tmp_path / ".fluxdrive" / "config.toml").write_text(text)
    return tmp_path


def _user(home: Path, text: str) -> Path:
    path = home / ".config" / "fluxdrive" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_defaults_are_the_protocol_numbers() -> None:
    config = Config()
    assert (config.ceiling.base, config.ceiling.max) == (4, 10)
    assert (
        config.selection.stage1_ratio,
        config.selection.stage1_min,
        config.selection.stage1_max,
    ) == (0.4, 2, 5)
    assert config.dispatch.max_concurrency == 6
    assert (config.dispatch.timeout_local_s, config.dispatch.timeout_remote_s) == (300, 600)
    assert config.dropout.threshold == 0.6
    assert config.dropout.exempt == ["fd-safety", "fd-correctness"]
    assert config.knowledge.decay_reviews == 10 and config.knowledge.max_per_agent == 5
    assert config.output.stdout_budget_chars == 4000
    assert config.research.max_agents == 2 and config.research.timeout_s == 60
    assert config.slicing.diff_min_lines == 1000 and config.slicing.document_min_lines == 200
    assert config.synthesis.dedup_max_distance == 0.3
    assert config.budget.per_input["repo"] == 300_000


def test_each_layer_overrides_the_one_before(tmp_path: Path, isolated_state: Path) -> None:
    user = _user(isolated_state, "[dispatch]\nmax_concurrency = 3\nretries = 2\n[dropout]\nthreshold = 0.5\n")
    project = _project(tmp_path, "[dispatch]\nmax_concurrency = 4\n")
    loaded = load_config(
        project,
        env={
            "HOME": str(isolated_state),
            "XDG_CONFIG_HOME": str(isolated_state / ".config"),
            "FLUXDRIVE_DROPOUT__THRESHOLD": "0.7",
        },
        flags={"dropout.threshold": 0.8},
        flag_labels={"dropout.threshold": "--dropout-threshold"},
    )
    config = loaded.config
    assert config.dispatch.retries == 2
    assert config.dispatch.max_concurrency == 4
    assert config.dropout.threshold == 0.8
    assert loaded.source_of("dispatch.retries") == str(user)
    assert loaded.source_of("dispatch.max_concurrency") == str(project / ".fluxdrive" / "config.toml")
    assert loaded.source_of("dropout.threshold") == "--dropout-threshold"
    assert loaded.source_of("ceiling.max") == "default"


def test_env_values_are_typed_and_lists_accept_commas(tmp_path: Path) -> None:
    loaded = load_config(
        tmp_path,
        env={
            "FLUXDRIVE_RESEARCH__ENABLED": "false",
            "FLUXDRIVE_DROPOUT__EXEMPT": "fd-safety, fd-x",
            "FLUXDRIVE_DEBUG": "1",
        },
    )
    assert loaded.config.research.enabled is False
    assert loaded.config.dropout.exempt == ["fd-safety", "fd-x"]
    assert loaded.source_of("research.enabled") == "env FLUXDRIVE_RESEARCH__ENABLED"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "[dispatch]\nmax_concurency = 3\n",
            "key 'dispatch.max_concurency': unknown key (hint: did you mean 'dispatch.max_concurrency'?)",
        ),
        (
            "[dispatch]\nmax_concurrency = 0\n",
            "key 'dispatch.max_concurrency': Input should be greater than or equal to 1 (got 0)",
        ),
        (
            "[dispatch]\nmax_concurrency = 'many'\n",
            "key 'dispatch.max_concurrency': Input should be a valid integer",
        ),
        (
            "[selection]\nstage1_min = 6\n",
            "key 'selection': stage1_min (6) must not exceed stage1_max (5)",
        ),
        ("[nosuch]\nx = 1\n", "key 'nosuch': unknown key"),
        ("[dispatch\n", "invalid TOML"),
    ],
)
def test_invalid_project_file_names_file_key_and_problem(tmp_path: Path, text: str, expected: str) -> None:
    _project(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path, env={})
    line = caught.value.one_line()
    assert line.startswith(str(tmp_path / ".fluxdrive" / "config.toml") + ": ")
    assert expected in line
    assert "\n" not in line


def test_invalid_env_value_names_the_variable(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path, env={"FLUXDRIVE_DISPATCH__RETRIES": "99"})
    assert caught.value.one_line().startswith("env FLUXDRIVE_DISPATCH__RETRIES: key 'dispatch.retries'")


def test_non_utf8_config_file(tmp_path: Path) -> None:
    (tmp_path / ".fluxdrive").mkdir()
    (tmp_path / ".fluxdrive" / "config.toml").write_bytes(b"[dispatch]\nx = '\xff'\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(tmp_path, env={})


def test_cli_config_show_prints_values_and_sources(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _project(tmp_path, "[dispatch]\nmax_concurrency = 2\n")
    result = cli("config", "show", "--project", tmp_path, "--set", "dropout.threshold=0.9")
    assert result.code == 0, result.err
    rows = {line.split()[0]: line for line in result.out.splitlines() if line[:1].isalpha() and "." in line.split()[0]}
    assert rows["dispatch.max_concurrency"].split()[1:] == [
        "2",
        str(tmp_path / ".fluxdrive" / "config.toml"),
    ]
    assert rows["dropout.threshold"].split()[1:] == ["0.9", "flag", "--set", "dropout.threshold"]
    assert rows["ceiling.max"].split()[1:] == ["10", "default"]
    data = json.loads(cli("config", "show", "--project", tmp_path, "--json", "--changed").out)
    assert data["values"] == {
        "dispatch.max_concurrency": {
            "value": 2,
            "source": str(tmp_path / ".fluxdrive" / "config.toml"),
        }
    }


def test_cli_config_show_bad_file_is_one_line_exit_2(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _project(tmp_path, "[dispatch]\nmax_concurrency = -1\n")
    result = cli("config", "show", "--project", tmp_path)
    assert result.code == 2
    assert result.out == ""
    assert result.err.count("\n") == 1
    assert "key 'dispatch.max_concurrency'" in result.err


def test_cli_bad_set_syntax(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = cli("config", "show", "--project", tmp_path, "--set", "novalue")
    assert result.code == 2 and "--set expects KEY=VALUE" in result.err
