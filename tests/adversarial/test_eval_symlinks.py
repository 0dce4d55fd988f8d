"""Eval fixtures never bring a file from outside them into a review (issue 26, item 7).

A suite is built in a temp directory with one case per link shape - a linked
file and a linked directory inside ``project/``, ``project/`` itself,
``document.md``, a linked file in ``base/``, ``base/`` itself, and a link the
patch creates - each pointing at a real file outside the suite that holds a
unique marker (and code the static analyzers flag as a P0). Beside them, one
clean case. ``eval run`` must refuse every linked case with one line naming
the link, still run the clean case, and the marker must appear nowhere: not
on stdout or stderr, not in the run's JSON, not in the history database and,
with the llm runtime, not in anything the fake provider received (its
scripted model reads and greps every file it can).
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

from tests.conftest import CliResult
from tests.fakes.llm_server import FakeProvider, Text, ToolCall

MARKER = f"OUTSIDE-EVAL-{uuid.uuid4().hex[:12]}"
LEAKY = (
    "import sqlite3\n\n\n"
    "def find(name):\n"
    f'    token = "{MARKER}"\n'
    '    db = sqlite3.connect("app.db")\n'
    "    return db.execute(f\"SELECT * FROM users WHERE name = '{name}'\").fetchall()\n"
)
APP = (
    "import sqlite3\n\nfrom flask import Flask, request\n\napp = Flask(__name__)\n\n\n"
    '@app.get("/orders")\n'
    "def orders():\n"
    '    customer = request.args.get("customer", "")\n'
    '    db = sqlite3.connect("shop.db")\n'
    "    rows = db.execute(f\"SELECT * FROM orders WHERE customer = '{customer}'\").fetchall()\n"
    "    db.close()\n"
    '    return {"orders": rows}\n'
)
SQLI = {"severity": "P0", "location": "app.py:12", "description": "customer formatted into SQL",
        "category": "sql-injection", "cwe": "CWE-89"}  # fmt: skip
PATCH = "--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"

# case id -> the link the refusal names
LINKED = {
    "link-file": "project/tool.py",
    "link-dir": "project/vendor_lib",
    "link-project": "project",
    "link-document": "document.md",
    "link-base-file": "base/tool.py",
    "link-base": "base",
    "link-by-patch": "base/leak.py",
}


def _case(suite: Path, case: str, findings: list[dict[str, str]] | None = None) -> Path:
    root = suite / case
    root.mkdir(parents=True)
    truth = {"fixture_id": case, "agent_type": "fd-safety", "findings": findings or []}
    (root / "ground-truth.json").write_text(json.dumps(truth), encoding="utf-8")
    return root


def _hostile_suite(tmp_path: Path) -> Path:
    """The suite: a clean case and one case per link shape, every link pointing into ``outside/``."""
    outside = tmp_path / "outside"
    (outside / "vendor_lib").mkdir(parents=True)
    (outside / "tool.py").write_text(LEAKY, encoding="utf-8")
    (outside / "vendor_lib" / "lib.py").write_text(LEAKY, encoding="utf-8")
    (outside / "project").mkdir()
    (outside / "project" / "app.py").write_text("x = 1\n", encoding="utf-8")
    (outside / "project" / "tool.py").write_text(LEAKY, encoding="utf-8")
    (outside / "document.md").write_text(f"# Plan\n\nThe key is {MARKER}. TBD: everything.\n", encoding="utf-8")

    suite = tmp_path / "suite"
    clean = _case(suite, "clean", [SQLI])
    (clean / "project").mkdir()
    (clean / "project" / "app.py").write_text(APP, encoding="utf-8")

    for case in ("link-file", "link-dir"):
        project = _case(suite, case) / "project"
        project.mkdir()
        (project / "app.py").write_text("x = 1\n", encoding="utf-8")
    (suite / "link-file" / "project" / "tool.py").symlink_to(outside / "tool.py")
    (suite / "link-dir" / "project" / "vendor_lib").symlink_to(outside / "vendor_lib", target_is_directory=True)
    (_case(suite, "link-project") / "project").symlink_to(outside / "project", target_is_directory=True)
    (_case(suite, "link-document") / "document.md").symlink_to(outside / "document.md")

    base_file = _case(suite, "link-base-file")
    (base_file / "base").mkdir()
    (base_file / "base" / "app.py").write_text("x = 1\n", encoding="utf-8")
    (base_file / "base" / "tool.py").symlink_to(outside / "tool.py")
    (base_file / "change.patch").write_text(PATCH, encoding="utf-8")

    base = _case(suite, "link-base")
    (base / "base").symlink_to(outside / "project", target_is_directory=True)
    (base / "change.patch").write_text(PATCH, encoding="utf-8")

    by_patch = _case(suite, "link-by-patch")
    (by_patch / "base").mkdir()
    (by_patch / "base" / "app.py").write_text("x = 1\n", encoding="utf-8")
    target = str(outside / "tool.py")
    (by_patch / "change.patch").write_text(
        PATCH + "diff --git a/leak.py b/leak.py\nnew file mode 120000\n--- /dev/null\n+++ b/leak.py\n"
        f"@@ -0,0 +1 @@\n+{target}\n\\ No newline at end of file\n",
        encoding="utf-8",
    )
    return suite


def _state_text() -> str:
    """Every file fluxdrive keeps state in (the history database among them), decoded leniently."""
    data = Path(os.environ["XDG_DATA_HOME"])
    return "\n".join(p.read_bytes().decode("utf-8", "replace") for p in data.rglob("*") if p.is_file())


def _check_run(result: CliResult, report: Path) -> dict[str, dict[str, object]]:
    """The run finished, every linked case is refused with its one line; the cases by id."""
    assert "Traceback" not in result.err
    text = report.read_text(encoding="utf-8")
    assert result.code == (0 if json.loads(text)["gate"]["passed"] else 1), result.err  # the gate's exit code
    cases = {case["fixture_id"]: case for case in json.loads(text)["fixtures"]}
    assert sorted(cases) == sorted([*LINKED, "clean"])
    for case, link in LINKED.items():
        error = cases[case]["error"]
        assert isinstance(error, str) and error.startswith(f"refused: {link} is a symbolic link"), (case, error)
        assert "\n" not in error and str(report.parent) not in error, error
        assert cases[case]["verdict"] is None and cases[case]["extra"] == 0, case
        row = next(line for line in result.out.splitlines() if line.startswith(f"{case} "))
        assert f"refused: {link} is a symbolic link" in row, row
    assert cases["clean"]["error"] is None, cases["clean"]
    for where, shown in (("stdout", result.out), ("stderr", result.err), ("run JSON", text), ("state", _state_text())):
        assert MARKER not in shown, f"the outside file reached the {where}"
    return cases


def test_static_eval_refuses_every_linked_case_and_runs_the_rest(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    suite = _hostile_suite(tmp_path)
    before = sorted(str(p.relative_to(suite)) for p in suite.rglob("*"))
    report = tmp_path / "run.json"
    result: CliResult = cli("eval", "run", suite, "--json", report)
    cases = _check_run(result, report)
    assert cases["clean"]["metrics"]["recall"] == 1.0, "the clean case still ran"  # type: ignore[index]
    assert sorted(str(p.relative_to(suite)) for p in suite.rglob("*")) == before, "nothing written into the suite"
    assert (tmp_path / "outside" / "tool.py").read_text(encoding="utf-8") == LEAKY


def test_llm_eval_never_sends_an_outside_file_to_the_provider(tmp_path: Path, cli, provider: FakeProvider) -> None:  # type: ignore[no-untyped-def]
    # every conversation reads the likely files and greps the whole copy for the marker
    provider.set_default(
        [
            ToolCall("read_file", {"path": "tool.py"}),
            ToolCall("read_file", {"path": "vendor_lib/lib.py"}),
            ToolCall("read_file", {"path": "document.md"}),
            ToolCall("read_file", {"path": "leak.py"}),
            ToolCall("grep", {"pattern": "OUTSIDE-EVAL", "glob": "**/*"}),
            Text("### Findings Index\nVerdict: safe\n"),
        ]
    )
    suite = _hostile_suite(tmp_path)
    report = tmp_path / "run.json"
    result: CliResult = cli(
        "eval", "run", suite, "--runtime", "llm", "--model", "openai:gpt-4o", "--agents", "fd-safety",
        "--json", report,
    )  # fmt: skip
    _check_run(result, report)
    assert provider.count() > 0, "the clean case was reviewed by the model"
    sent = "\n".join(request.raw for request in provider.requests)
    assert MARKER not in sent, "the outside file was sent to the provider"
