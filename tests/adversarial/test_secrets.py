"""Secrets a reviewer quotes, and a key a provider echoes, must not leave fluxdrive raw.

A committed copy of the Flask shop gets six planted secrets, random but
correctly shaped (never a real credential): a ``.env`` password, a YAML
``api_key``, a PEM RSA private key, a DSN password, an AWS access key id and
a GitHub token. Then, for real:

- a ``fluxdrive review --runtime llm`` process against the wire-level fake
  provider, whose scripted fd-safety reads the secrets with its tools, shares
  a finding quoting them and answers a report quoting every one;
- a provider answering 401 with the API key echoed in its message;
- a ``cli-agent`` review whose command prints a report quoting them;
- ``fluxdrive findings write`` / ``verdicts write`` fed secrets by hand;
- ``fluxdrive synthesize`` over reports another system wrote.

Every file under the output directory, stdout, stderr, every row of the
history database and (for the model) every request the provider received -
tool results, prompts, checkpoint turns; only the model's own earlier turns,
which it wrote, are left out - are searched for each planted value. Each scenario records what it found in ``LEDGER``; the
last test prints the figures (``pytest -s``) and asserts none was found raw.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import shutil
import sqlite3
import string
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from fluxdrive._masking import scrub
from tests.adversarial._support import files_under, review_dir
from tests.conftest import CliResult, committed_copy, run_fluxdrive
from tests.fakes.llm_server import Error, FakeProvider, Text, ToolCall

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "projects" / "py-webapp"
_ALNUM = string.ascii_letters + string.digits


def _random(alphabet: str, length: int) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(length))


def _pem_body() -> list[str]:
    """Base64 lines shaped like a 2048-bit RSA key's body: random bytes, never a real key."""
    body = "MIIEowIBAAKCAQEA" + base64.b64encode(secrets.token_bytes(1140)).decode()
    return [body[i : i + 64] for i in range(0, len(body), 64)]


@dataclass(frozen=True)
class Planted:
    """One planted secret: its name, its value and the strings whose presence means it leaked."""

    name: str
    value: str
    needles: tuple[str, ...]


DB_PASSWORD = _random(_ALNUM, 22)
API_KEY = _random(_ALNUM, 32)
PEM_LINES = _pem_body()
PEM = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(PEM_LINES) + "\n-----END RSA PRIVATE KEY-----\n"
DSN_PASSWORD = _random(_ALNUM, 18)
DSN = f"postgres://admin:{DSN_PASSWORD}@db.internal:5432/shop"
AWS_KEY_ID = "AKIA" + _random(string.ascii_uppercase + string.digits, 16)
GITHUB_TOKEN = "ghp_" + _random(_ALNUM, 36)

PLANTED: tuple[Planted, ...] = (
    Planted(".env DB_PASSWORD", DB_PASSWORD, (DB_PASSWORD,)),
    Planted("settings.yaml api_key", API_KEY, (API_KEY,)),
    # any body line of the key is the key leaking (the whole block is never needed)
    Planted("deploy/key.pem private key", PEM, tuple(line for line in PEM_LINES if len(line) >= 32)),
    Planted("DSN password", DSN_PASSWORD, (DSN_PASSWORD,)),
    Planted("AWS access key id", AWS_KEY_ID, (AWS_KEY_ID,)),
    Planted("GitHub token", GITHUB_TOKEN, (GITHUB_TOKEN,)),
)

PROJECT_FILES = {
    ".env": f"DB_PASSWORD={DB_PASSWORD}\nDB_HOST=db.internal\n",
    "config/settings.yaml": f"payments:\n  provider: acme-pay\n  api_key: {API_KEY}\n  timeout_s: 10\n",
    "deploy/key.pem": PEM,
    "shop/warehouse.py": (
        f'"""Nightly export to the warehouse."""\n\nWAREHOUSE_DSN = "{DSN}"\n\n\ndef dsn():\n    return WAREHOUSE_DSN\n'
    ),
    "shop/integrations.py": (
        '"""Third-party credentials (should come from the environment)."""\n\n'
        f'AWS_ACCESS_KEY_ID = "{AWS_KEY_ID}"\n'
        f'GITHUB_TOKEN = "{GITHUB_TOKEN}"\n'
    ),
}

# How a reviewer quotes them: inline in titles and prose, and as evidence blocks copied from the files.
PEM_EVIDENCE = textwrap.indent(PEM, "       ")
LEAKY_REPORT = f"""### Findings Index
- P0 | SF-001 | "Secrets" | Database password committed in .env: DB_PASSWORD={DB_PASSWORD} is readable by anyone | .env:1
- P0 | SF-002 | "Secrets" | Payment provider key committed: api_key: {API_KEY} in config/settings.yaml | config/settings.yaml:3
- P0 | SF-003 | "Secrets" | RSA private key committed in deploy/key.pem | deploy/key.pem:1
- P0 | SF-004 | "Secrets" | Warehouse DSN {DSN} embeds the database password | shop/warehouse.py:3
- P0 | SF-005 | "Secrets" | AWS access key id {AWS_KEY_ID} hardcoded in integrations | shop/integrations.py:3
- P0 | SF-006 | "Secrets" | GitHub token {GITHUB_TOKEN} hardcoded in integrations | shop/integrations.py:4
Verdict: risky

### Summary
Six live credentials are committed. The .env sets DB_PASSWORD={DB_PASSWORD} for production, the
payments section has api_key: {API_KEY} in clear, deploy/key.pem is an unencrypted RSA key, the
warehouse connects with {DSN}, and integrations.py holds {AWS_KEY_ID} and {GITHUB_TOKEN}.

### Issues Found
1. SF-001 P0: Database password committed in .env (.env:1)
   Evidence:
       DB_PASSWORD={DB_PASSWORD}
   Fix: load it from the secret store and rotate DB_PASSWORD={DB_PASSWORD} now.

2. SF-002 P0: Payment provider key committed (config/settings.yaml:3)
   Evidence:
       api_key: {API_KEY}
   Fix: rotate api_key: {API_KEY} and read it from the environment.

3. SF-003 P0: RSA private key committed (deploy/key.pem:1)
   Evidence:
{PEM_EVIDENCE}
   Fix: revoke the key; keep deploy keys in the CI secret store.

4. SF-004 P0: DSN embeds the password (shop/warehouse.py:3)
   Evidence:
       WAREHOUSE_DSN = "{DSN}"
   Fix: build the DSN from the environment.

5. SF-005 P0: AWS key id hardcoded (shop/integrations.py:3)
   Evidence:
       AWS_ACCESS_KEY_ID = "{AWS_KEY_ID}"

6. SF-006 P0: GitHub token hardcoded (shop/integrations.py:4)
   Evidence:
       GITHUB_TOKEN = "{GITHUB_TOKEN}"
"""
CLEAN = "### Findings Index\nVerdict: safe\n\n### Summary\nNothing in my lane.\n"
SHARED_SUMMARY = (
    f"Committed credentials: DB_PASSWORD={DB_PASSWORD} in .env, api_key: {API_KEY} in settings, "
    f"AWS key {AWS_KEY_ID}, token {GITHUB_TOKEN}, DSN {DSN}."
)
SHARED_REFS = [".env:1", f"config/settings.yaml:3 api_key: {API_KEY}", f"shop/warehouse.py:3 {DSN}"]

# scenario -> {planted secret name: [where it was found raw]}; filled by each test, read by the last one
LEDGER: dict[str, dict[str, list[str]]] = {}


# --- helpers -------------------------------------------------------------------------------------------


def _leaks(texts: dict[str, str]) -> dict[str, list[str]]:
    """{planted secret: [places]} for every planted value found raw in ``texts`` (place -> text)."""
    found: dict[str, list[str]] = {}
    for secret in PLANTED:
        places = [place for place, text in texts.items() if any(needle in text for needle in secret.needles)]
        if places:
            found[secret.name] = places
    return found


def _history() -> dict[str, str]:
    """Every row of every table of the history database, as text (empty when there is none)."""
    database = Path(os.environ["XDG_DATA_HOME"]) / "fluxdrive" / "history.db"
    if not database.is_file():
        return {}
    rows: dict[str, str] = {}
    with sqlite3.connect(database) as connection:
        tables = [t for (t,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            dump = connection.execute(f'SELECT * FROM "{table}"').fetchall()
            rows[f"history.db:{table}"] = "\n".join(repr(row) for row in dump)
    rows["history.db (bytes)"] = database.read_bytes().decode("utf-8", errors="replace")
    return rows


def _console(*results: CliResult) -> dict[str, str]:
    texts: dict[str, str] = {}
    for number, result in enumerate(results, start=1):
        texts[f"stdout #{number}"] = result.out
        texts[f"stderr #{number}"] = result.err
    return texts


def _record(scenario: str, found: dict[str, list[str]]) -> None:
    LEDGER[scenario] = found


def _report(found: dict[str, list[str]]) -> str:
    return "; ".join(f"{name} raw in {', '.join(places)}" for name, places in found.items())


def _review(project: Path, *args: str, expand: str = "none") -> CliResult:
    return run_fluxdrive(
        "review", ".", "--yes", "--expand", expand, "--fail-on", "never", "--allow-incomplete", *args, cwd=project
    )


# --- fixtures ------------------------------------------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The shop with the six secrets planted, committed."""
    source = tmp_path / "source"
    shutil.copytree(FIXTURE, source)
    for name, text in PROJECT_FILES.items():
        path = source / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return committed_copy(source, tmp_path / "shop")


def test_planted_secrets_are_in_the_project(project: Path) -> None:
    """The scenario is real: every planted value is in the committed project, raw."""
    committed = files_under(project)
    assert set(_leaks(committed)) == {secret.name for secret in PLANTED}


# --- a. the llm runtime -----------------------------------------------------------------------------


def _requests_without_the_models_own_words(provider: FakeProvider) -> dict[str, str]:
    """What fluxdrive sent the provider: every request with the model's own earlier turns taken out.

    A conversation's history repeats the assistant's tool calls and text back to the provider; that is
    the model's own words returning to it, not something fluxdrive disclosed. Everything else - system
    prompts, user turns (the checkpoint quoting peers' findings), tool results - is fluxdrive's.
    """
    sent: dict[str, str] = {}
    for number, request in enumerate(provider.requests, start=1):
        body = request.body
        if isinstance(body, dict) and isinstance(body.get("messages"), list):
            body = {**body, "messages": [m for m in body["messages"] if not _from_assistant(m)]}
            sent[f"request #{number} ({request.route})"] = json.dumps(body, ensure_ascii=False)
        else:
            sent[f"request #{number} ({request.route})"] = request.raw
    return sent


def _from_assistant(message: object) -> bool:
    return isinstance(message, dict) and message.get("role") == "assistant"


def test_llm_review_quoting_secrets_leaks_none(project: Path, provider: FakeProvider) -> None:
    provider.script(
        "Review task for fd-safety",
        [
            ToolCall("read_file", {"path": ".env"}),
            ToolCall("read_file", {"path": "deploy/key.pem"}),
            ToolCall("read_file", {"path": "config/settings.yaml"}),
            ToolCall("read_file", {"path": "shop/warehouse.py"}),
            ToolCall("read_file", {"path": "shop/integrations.py"}),
            ToolCall("grep", {"pattern": "password|api_key|BEGIN|AKIA|ghp_|postgres://"}),
            ToolCall(
                "share_finding",
                {
                    "severity": "blocking",
                    "category": "committed-secrets",
                    "summary": SHARED_SUMMARY,
                    "file_refs": SHARED_REFS,
                },
            ),
            Text(LEAKY_REPORT),
        ],
    )

    # Stage 2 starts after fd-safety shared its finding: its agents get it at the checkpoint, from the channel.
    # (selection.staging=always: the roster fits the budget, which would run everyone in Stage 1)
    done = _review(
        project, "--runtime", "llm", "--model", "openai:gpt-4o", "--set", "selection.staging=always", expand="all"
    )

    assert done.code == 0, done.err
    out = review_dir(project)
    run = json.loads((out / "run.json").read_text())
    assert run["agents"]["fd-safety"]["outcome"] == "completed", run["agents"]["fd-safety"]
    checkpoints = [r for r in provider.requests if "Checkpoint before your final report" in r.raw]
    assert checkpoints, "another agent was sent fd-safety's blocking finding (the channel reached a provider)"
    tool_results = provider.tool_results("Review task for fd-safety")
    assert len(tool_results) >= 6, "every read_file and grep ran and its result went back to the model"
    assert "DB_PASSWORD=" in tool_results[0] and "api_key:" in tool_results[2], "the tools read the real files"
    # the findings still point at the secrets: the location survives the masking
    findings = json.loads((out / "findings.json").read_text())["findings"]
    locations = {location for finding in findings for location in finding["locations"]}
    assert {".env:1", "config/settings.yaml:3", "deploy/key.pem:1", "shop/warehouse.py:3"} <= locations, locations
    peer = [json.loads(line) for line in (out / "peer-findings.jsonl").read_text().splitlines()]
    assert any(p["agent"] == "fd-safety" and ".env:1" in p["file_refs"] for p in peer), peer

    recorded = _history()
    assert recorded, "the run is in the history database"
    texts = {**files_under(out), **_console(done), **recorded, **_requests_without_the_models_own_words(provider)}
    texts.update({f"tool result #{n}": r for n, r in enumerate(tool_results, start=1)})
    found = _leaks(texts)
    _record("a. llm review (tools, share_finding, report)", found)
    assert not found, _report(found)


# --- b. a provider echoing the API key ------------------------------------------------------------------


def test_an_api_key_echoed_in_a_provider_error_reaches_no_output(
    project: Path, provider: FakeProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "fdk-" + _random(_ALNUM, 44)  # not sk- shaped: only the configured-key rule can catch it
    monkeypatch.setenv("OPENAI_API_KEY", key)
    provider.script(
        "Review task for fd-safety",
        Error(401, "authentication_error", message=f"Incorrect API key provided: Bearer {key}"),
    )
    provider.script(
        "Review task for fd-quality",
        Error(
            401,
            "authentication_error",
            message=f"Incorrect API key provided: {key}. You can find your API key at https://example.invalid.",
        ),
    )

    done = _review(project, "--runtime", "llm", "--model", "openai:gpt-4o")

    out = review_dir(project)
    run = json.loads((out / "run.json").read_text())
    for agent in ("fd-safety", "fd-quality"):
        record = run["agents"][agent]
        assert record["outcome"] == "error", record
        assert "Incorrect API key provided" in (record.get("error") or ""), "the provider's message was kept"
    history = run_fluxdrive("history", "--run", run["run_id"], cwd=project)
    recorded = _history()
    assert recorded, "the run is in the history database"
    texts = {**files_under(out), **_console(done, history), **recorded}
    leaked = sorted(place for place, text in texts.items() if key in text or key[:24] in text)
    LEDGER["b. API key echoed in a 401"] = {"OPENAI_API_KEY (fake)": leaked} if leaked else {}
    assert not leaked, f"the API key is raw in {', '.join(leaked)}"


# --- c. the cli-agent runtime ---------------------------------------------------------------------------

STAND_IN = """
import sys
from pathlib import Path
agent, prompt_file = sys.argv[1], sys.argv[2]
Path(prompt_file).read_text()
report = Path({report!r}).read_text() if agent == "fd-safety" else {clean!r}
sys.stdout.write(report)
"""


def test_cli_agent_report_quoting_secrets_leaks_none(project: Path, tmp_path: Path) -> None:
    report = tmp_path / "leaky-report.md"
    report.write_text(LEAKY_REPORT)
    stand_in = tmp_path / "bin" / "reviewer"
    stand_in.parent.mkdir()
    stand_in.write_text(f"#!{sys.executable}\n" + STAND_IN.format(report=str(report), clean=CLEAN))
    stand_in.chmod(0o755)
    (project / ".fluxdrive").mkdir()
    (project / ".fluxdrive" / "config.toml").write_text(
        f'[cli_agent]\ntool = "command"\ncommand = "{stand_in} {{agent}} {{prompt_file}}"\n'
    )

    done = _review(project, "--runtime", "cli-agent")

    assert done.code == 0, done.err
    out = review_dir(project)
    run = json.loads((out / "run.json").read_text())
    assert run["agents"]["fd-safety"]["outcome"] == "completed", run["agents"]["fd-safety"]
    findings = json.loads((out / "findings.json").read_text())["findings"]
    locations = {location for finding in findings for location in finding["locations"]}
    assert {".env:1", "config/settings.yaml:3", "shop/integrations.py:4"} <= locations, locations
    history = run_fluxdrive("history", "--run", run["run_id"], cwd=project)
    recorded = _history()
    assert recorded, "the run is in the history database"
    found = _leaks({**files_under(out), **_console(done, history), **recorded})
    _record("c. cli-agent command report", found)
    assert not found, _report(found)


# --- d. findings write / verdicts write ----------------------------------------------------------------


def test_findings_and_verdicts_written_by_hand_store_no_secret(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    channel = run / "peer-findings.jsonl"
    leaky = f"password={DB_PASSWORD} and {AWS_KEY_ID}"

    wrote = run_fluxdrive(
        "findings", "write", channel, "blocking", "fd-safety", "leaked", leaky, ".env:1", f"config/settings.yaml:3 api_key: {API_KEY}"
    )  # fmt: skip
    assert wrote.code == 0, wrote.err
    verdict = run_fluxdrive(
        "verdicts", "write", run, "fd-safety", "NEEDS_ATTENTION",
        f"2 P0: DB_PASSWORD={DB_PASSWORD} in .env, token {GITHUB_TOKEN}, DSN {DSN}",
    )  # fmt: skip
    assert verdict.code == 0, verdict.err
    read = run_fluxdrive("findings", "read", channel)
    listed = run_fluxdrive("verdicts", run)
    as_json = run_fluxdrive("verdicts", run, "--json")
    timeline = run_fluxdrive("findings", "timeline", channel)
    assert read.code == 0 and listed.code == 0 and as_json.code == 0 and timeline.code == 0

    (finding,) = json.loads(read.out)
    assert finding["file_refs"][0] == ".env:1" and finding["category"] == "leaked"
    assert "fd-safety" in listed.out and "NEEDS_ATTENTION" in listed.out
    found = _leaks({**files_under(run), **_console(wrote, verdict, read, listed, as_json, timeline)})
    _record("d. findings write / verdicts write", found)
    assert not found, _report(found)


# --- e. synthesize over foreign reports ----------------------------------------------------------------


def test_synthesize_over_foreign_reports_leaks_none(tmp_path: Path) -> None:
    reports = tmp_path / "their-reports"
    reports.mkdir()
    (reports / "fd-safety.md").write_text(LEAKY_REPORT + "\n<!-- flux-drive:complete -->\n")
    (reports / "fd-quality.md").write_text(CLEAN + "\n<!-- flux-drive:complete -->\n")
    before = set(files_under(reports))

    done = run_fluxdrive("synthesize", reports, "--fail-on", "never")
    as_json = run_fluxdrive("synthesize", reports, "--json", "--verbose", "--fail-on", "never")

    assert done.code == 0, done.err
    assert as_json.code == 0, as_json.err
    assert {".env:1", "config/settings.yaml:3"} <= {
        location for finding in json.loads(as_json.out)["findings"] for location in finding["locations"]
    }
    written = {name: text for name, text in files_under(reports).items() if name not in before}
    assert {"findings.json", "summary.md", "findings.sarif"} <= set(written)
    found = _leaks({**written, **_console(done, as_json)})
    _record("e. synthesize over foreign reports", found)
    assert not found, _report(found)


# --- the figures -----------------------------------------------------------------------------------------


def figures() -> list[str]:
    """Secrets planted / found raw anywhere, over the scenarios that ran (the suite prints them at the end)."""
    if not LEDGER:
        return []
    planted = len(PLANTED) + 1  # the six in the project, and the API key a provider echoes (scenario b)
    lines = [f"secrets planted: {planted} ({len(PLANTED)} in the project + 1 API key echoed by the provider)"]
    for scenario, found in LEDGER.items():
        detail = f" -> {_report(found)}" if found else ""
        lines.append(f"  {scenario}: found raw {len(found)}{detail}")
    distinct = sorted({name for found in LEDGER.values() for name in found})
    leaking = sum(1 for found in LEDGER.values() if found)
    lines.append(
        f"secrets planted / found raw anywhere: {planted} / {len(distinct)}"
        + (f" ({', '.join(distinct)}; in {leaking} of {len(LEDGER)} scenarios)" if distinct else "")
    )
    return lines


@pytest.mark.parametrize(
    "text",
    [
        "/tmp/task-management-dashboard/run.json",  # "sk-management-dashboard" is a path, not an OpenAI key
        "docs/risk-assessment-framework-notes.md",
        "the disk-utilization-threshold-exceeded alert",
        "mask_live_preview_components_enabled",
    ],
)
def test_ordinary_names_are_not_masked_as_keys(text: str) -> None:
    """A key shape must start a token: masking inside a word corrupted run.json's project_root."""
    assert scrub(text) == text


def test_key_shapes_at_a_token_start_are_masked() -> None:
    text = "OPENAI sk-proj-abcDEF1234567890abcdef1234 stripe('sk_live_4eC39HqLyjWDarjtT1zdp7dc') ghp_" + "a1" * 18
    assert scrub(text) == "OPENAI **** stripe('****') ****"
