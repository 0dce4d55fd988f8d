"""Where a finding is, and what the project says about it, decide what a healthy project sees.

Real reviews (``fluxdrive review DIR --yes``) of a small committed project: the same sink in
shipped code, a test, an example, the docs and a maintainer script; ``# nosec``;
``.fluxdriveignore`` and ``static.exclude``; and a change that tries to silence its own finding.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from fluxdrive.runtimes.static.placement import place_of
from tests.conftest import CliResult

Cli = Callable[..., CliResult]

SINK = 'import subprocess\n\n\ndef run(host):\n    return subprocess.run("ping " + host, shell=True)\n'


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@fluxdrive.invalid", "-c", "user.name=t", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


def _project(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "proj"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "initial")
    return root


def _findings(cli: Cli, root: Path | None, out: Path, *extra: str) -> dict[str, object]:
    target = [root] if root is not None else []  # --staged reviews the repository of the working directory
    done = cli("review", *target, "--yes", "--agents", "fd-safety", "--output-dir", out, *extra)
    assert done.code in (0, 1), done.err
    return json.loads((out / "findings.json").read_text())  # type: ignore[no-any-return]


def _by_file(findings: dict[str, object]) -> dict[str, str]:
    found: dict[str, str] = {}
    for finding in findings["findings"]:  # type: ignore[attr-defined]
        for location in finding["locations"]:
            found.setdefault(location.split(":", 1)[0], finding["severity"])
    return found


def test_places_follow_the_path() -> None:
    assert place_of("src/pkg/run.py") == "code"
    assert place_of("tests/unit/test_run.py") == "test"
    assert place_of("pkg/run_test.go") == "test"
    assert place_of("web/src/app.spec.ts") == "test"
    assert place_of("examples/flask/app.py") == "example"
    assert place_of("docs/tutorial.md") == "docs"
    assert place_of("README.md") == "docs"
    assert place_of("tools/make_tables.py") == "tooling"
    assert place_of(".github/workflows/ci.yml") == "code"  # workflows run with the repository's secrets


def test_the_same_sink_is_p0_in_code_and_p2_in_tests_examples_docs_and_tooling(cli: Cli, tmp_path: Path) -> None:
    root = _project(
        tmp_path,
        {
            "pkg/net.py": SINK,
            "tests/test_net.py": SINK,
            "examples/ping.py": SINK,
            "tools/release.py": SINK,
            "docs/guide.md": f"# Guide\n\n```python\n{SINK}```\n",
        },
    )
    findings = _findings(cli, root, tmp_path / "out")
    by_file = _by_file(findings)
    assert by_file["pkg/net.py"] == "P0", by_file
    for other in ("tests/test_net.py", "examples/ping.py", "tools/release.py", "docs/guide.md"):
        assert by_file.get(other) == "P2", (other, by_file)
    assert findings["verdict"] == "risky"


def test_nosec_waives_a_line_but_not_in_the_change_that_adds_it(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _project(tmp_path, {"pkg/net.py": SINK.replace("shell=True)", "shell=True)  # nosec B602")})
    assert "pkg/net.py" not in _by_file(_findings(cli, root, tmp_path / "out1"))

    # a change that adds a new sink together with its own `# nosec` does not silence the review
    text = (
        root / "pkg/net.py"
    ).read_text() + '\n\ndef dig(name):\n    return subprocess.run("dig " + name, shell=True)  # nosec\n'
    (root / "pkg/net.py").write_text(text)
    _git(root, "add", "-A")
    monkeypatch.chdir(root)
    findings = _findings(cli, None, tmp_path / "out2", "--staged")
    locations = [loc for f in findings["findings"] for loc in f["locations"]]  # type: ignore[attr-defined]
    dig = 1 + text.splitlines().index('    return subprocess.run("dig " + name, shell=True)  # nosec')
    assert locations == [f"pkg/net.py:{dig}"], locations  # the old, reviewed line keeps its waiver


def test_fluxdriveignore_and_static_exclude_leave_paths_out_and_list_them(cli: Cli, tmp_path: Path) -> None:
    root = _project(
        tmp_path,
        {
            "pkg/net.py": SINK,
            "samples/vulnerable/cmd.py": SINK,
            "generated/client.py": SINK,
            ".fluxdriveignore": "# deliberately vulnerable samples\nsamples/\n!samples/keep.py\n",
            ".fluxdrive/config.toml": '[static]\nexclude = ["generated/**"]\n',
        },
    )
    findings = _findings(cli, root, tmp_path / "out")
    assert set(_by_file(findings)) == {"pkg/net.py"}
    skipped = {s["path"]: s["reason"] for s in findings["skipped_files"]}  # type: ignore[attr-defined]
    assert skipped["samples/vulnerable/cmd.py"] == "excluded by .fluxdriveignore"
    assert skipped["generated/client.py"] == "excluded by static.exclude"


def test_a_change_cannot_exclude_itself_with_its_own_fluxdriveignore(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _project(tmp_path, {"pkg/net.py": "X = 1\n"})
    (root / "pkg/net.py").write_text(SINK)
    (root / ".fluxdriveignore").write_text("pkg/\n")
    _git(root, "add", "-A")
    monkeypatch.chdir(root)
    findings = _findings(cli, None, tmp_path / "out", "--staged")
    assert _by_file(findings).get("pkg/net.py") == "P0", findings["findings"]


def test_a_change_cannot_mark_itself_vendored_in_gitattributes(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _project(tmp_path, {"pkg/net.py": "X = 1\n"})
    (root / "pkg/net.py").write_text(SINK)
    (root / ".gitattributes").write_text("pkg/** linguist-vendored\npkg/** linguist-generated\n")
    _git(root, "add", "-A")
    monkeypatch.chdir(root)
    findings = _findings(cli, None, tmp_path / "out", "--staged")
    assert _by_file(findings).get("pkg/net.py") == "P0", findings["findings"]
