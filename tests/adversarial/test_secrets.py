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

Issue 26 item 10 adds a hostile repository whose pull request commits ten secrets (``.env``, YAML, ``settings.py``,
URLs with credentials, a Slack webhook, a bare key body, a README password) that a scripted model quotes *bare*, with
no shape around them: offline research, an llm review, ``publish github`` (review and check run) and ``publish gitlab``
to the fake forges, ``kb remember``, the HTML report and (when redis-server runs) the Redis stream are scanned -
every new file under the project, stdout/stderr, the history, every provider request and forge payload.
Only masking by the values collected from the tree can pass it: the figure is ``10 / 0``.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import sqlite3
import string
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fluxdrive.cli.examples import clean_copy
from fluxdrive.core.masking import scrub
from tests.adversarial._support import files_under, review_dir
from tests.conftest import CliResult, committed_copy, run_fluxdrive, user_config_file
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
    clean_copy(FIXTURE, source)
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
    user_config_file().write_text(f'[cli_agent]\ntool = "command"\ncommand = "{stand_in} {{agent}} {{prompt_file}}"\n')

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
    lines = _figures_shop() if LEDGER else []
    if LEDGER_10:
        distinct = sorted({name for found in LEDGER_10.values() for name in found})
        lines.append(
            "secrets planted / found raw anywhere (hostile repository: research, llm review, publish payloads,"
            f" kb, HTML{', Redis' if 'Redis stream' in LEDGER_10 else ''}): {len(HOSTILE)} / {len(distinct)}"
            + (f" ({', '.join(distinct)})" if distinct else "")
        )
    return lines


def _figures_shop() -> list[str]:
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


# --- issue 26 item 10: ten secrets a hostile repository holds, through every output, publisher and store ------
#
# Values a model quotes bare in prose carry no shape: only the values collected from the tree at the start of a
# run can mask them. Each is random, secret-looking, and free of words a placeholder filter would skip.

_WORDY = __import__("re").compile(r"(?i)todo|fixme|your|sample|dummy|example|changeme|redacted|placeholder")


def _secret(alphabet: str, length: int, tail: str) -> str:
    while True:
        value = _random(alphabet, length) + tail
        if not _WORDY.search(value):
            return value


H_AWS_ID = "AKIA" + _secret(string.ascii_uppercase + string.digits, 15, "7")
H_AWS_SECRET = _secret(_ALNUM + "+/", 39, "4")
H_STRIPE = "sk_live_" + _secret(_ALNUM, 23, "5")
H_DB_PASSWORD = _secret(_ALNUM, 17, "8")
H_REDIS_PASSWORD = _secret(_ALNUM, 19, "3")
H_ENCRYPTION_KEY = _secret(_ALNUM, 31, "1")
H_MASTER_KEY = _secret(_ALNUM, 23, "2")
H_PROSE_PASSWORD = _secret(_ALNUM, 11, "!6")
H_SLACK_TOKEN = _secret(_ALNUM, 23, "9")
H_SLACK = f"https://hooks.slack.com/services/T{_random(string.ascii_uppercase, 8)}/B{_random(string.ascii_uppercase, 8)}/{H_SLACK_TOKEN}"
H_KEY_LINES = _pem_body()
H_KEY_BODY = "\n".join(H_KEY_LINES)

HOSTILE: tuple[Planted, ...] = (
    Planted("AWS access key id (config/aws.yml)", H_AWS_ID, (H_AWS_ID,)),
    Planted("AWS secret access key (config/aws.yml)", H_AWS_SECRET, (H_AWS_SECRET,)),
    Planted("Stripe sk_live_ key (settings.py)", H_STRIPE, (H_STRIPE,)),
    Planted("database URL password (settings.py)", H_DB_PASSWORD, (H_DB_PASSWORD,)),
    Planted("redis://:PASSWORD@host (.env)", H_REDIS_PASSWORD, (H_REDIS_PASSWORD,)),
    Planted(".env ENCRYPTION_KEY", H_ENCRYPTION_KEY, (H_ENCRYPTION_KEY,)),
    Planted(".env MASTER_KEY", H_MASTER_KEY, (H_MASTER_KEY,)),
    Planted("prose password (README.md)", H_PROSE_PASSWORD, (H_PROSE_PASSWORD,)),
    Planted("Slack webhook URL (config/alerts.yaml)", H_SLACK, (H_SLACK_TOKEN,)),
    Planted("bare key body (deploy/signing.key)", H_KEY_BODY, tuple(line for line in H_KEY_LINES if len(line) >= 32)),
)

HOSTILE_FILES = {
    ".env": (
        f"REDIS_URL=redis://:{H_REDIS_PASSWORD}@cache.internal:6379/0\n"
        f"ENCRYPTION_KEY={H_ENCRYPTION_KEY}\nMASTER_KEY={H_MASTER_KEY}\nLOG_LEVEL=info\n"
    ),
    "config/aws.yml": (
        f"aws:\n  region: eu-west-1\n  access_key_id: {H_AWS_ID}\n  secret_access_key: {H_AWS_SECRET}\n"
    ),
    "config/alerts.yaml": f"alerts:\n  channel: ops\n  webhook: {H_SLACK}\n",
    "shop/settings.py": (
        '"""Production settings."""\n\n'
        f'STRIPE_KEY = "{H_STRIPE}"\n'
        f'DATABASE_URL = "postgres://shop:{H_DB_PASSWORD}@db.internal:5432/shop"\n'
    ),
    "README.md": (
        "# Shop\n\nRun `make dev`.\n\n## Staging\n\n"
        f"The staging admin password is {H_PROSE_PASSWORD} (ask ops before you change it).\n"
    ),
    "deploy/signing.key": "-----BEGIN RSA PRIVATE KEY-----\n" + H_KEY_BODY + "\n-----END RSA PRIVATE KEY-----\n",
}

# How the scripted model quotes them: bare, in prose, with nothing around them that looks like a secret.
_QUOTED = (
    f"the AWS key {H_AWS_ID} with secret {H_AWS_SECRET}, the Stripe key {H_STRIPE}, the database "
    f"password {H_DB_PASSWORD}, the Redis password {H_REDIS_PASSWORD}, ENCRYPTION_KEY={H_ENCRYPTION_KEY}, "
    f"MASTER_KEY={H_MASTER_KEY}, the admin password is {H_PROSE_PASSWORD}, the alert hook {H_SLACK}"
)
HOSTILE_REPORT = f"""### Findings Index
- P0 | SF-101 | "Secrets" | AWS credentials {H_AWS_ID} / {H_AWS_SECRET} committed | config/aws.yml:3
- P0 | SF-102 | "Secrets" | Stripe key {H_STRIPE} and database password {H_DB_PASSWORD} in settings | shop/settings.py:3
- P0 | SF-103 | "Secrets" | Redis password {H_REDIS_PASSWORD} in .env | .env:1
- P0 | SF-104 | "Secrets" | ENCRYPTION_KEY {H_ENCRYPTION_KEY} and MASTER_KEY {H_MASTER_KEY} committed | .env:2
- P0 | SF-105 | "Secrets" | Staging admin password {H_PROSE_PASSWORD} in the README | README.md:7
- P0 | SF-106 | "Secrets" | Slack webhook {H_SLACK} committed | config/alerts.yaml:3
- P0 | SF-107 | "Secrets" | Signing key committed, body starts {H_KEY_LINES[1]} | deploy/signing.key:2
Verdict: risky

### Summary
Ten live credentials are committed: {_QUOTED}. The signing key body is:
{H_KEY_BODY}

### Issues Found
1. SF-101 P0: AWS credentials committed (config/aws.yml:3)
   Evidence: access key {H_AWS_ID}, secret {H_AWS_SECRET}
   Fix: rotate {H_AWS_SECRET} now.

2. SF-106 P0: Slack webhook committed (config/alerts.yaml:3)
   Evidence: {H_SLACK}

3. SF-107 P0: signing key committed (deploy/signing.key:2)
   Evidence:
       {H_KEY_LINES[1]}
       {H_KEY_LINES[2]}
"""
HOSTILE_SHARED = {
    "severity": "blocking",
    "category": "committed-secrets",
    "summary": f"Committed credentials: {_QUOTED}; key body {H_KEY_LINES[1]}",
    "file_refs": [".env:1", f"config/aws.yml:4 {H_AWS_SECRET}", f"README.md:7 password is {H_PROSE_PASSWORD}"],
}
QUESTION = "where are the aws credentials and the stripe key"
GH_TOKEN = "ghs_" + _random(_ALNUM, 36)
GL_TOKEN = "glpat-" + _random(_ALNUM, 20)
LEDGER_10: dict[str, dict[str, list[str]]] = {}


def _hostile_leaks(texts: dict[str, str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for secret in HOSTILE:
        places = [place for place, text in texts.items() if any(needle in text for needle in secret.needles)]
        if places:
            found[secret.name] = places
    return found


def _git(repo: Path, *args: str) -> str:
    import subprocess

    done = subprocess.run(
        ["git", "-c", "user.email=tests@fluxdrive.invalid", "-c", "user.name=fluxdrive tests", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    """The shop on ``main``, and a ``feature`` branch (the pull request) that commits the ten secrets."""
    repo = committed_copy(FIXTURE, tmp_path / "hostile")
    _git(repo, "checkout", "-q", "-b", "feature")
    for name, text in HOSTILE_FILES.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "deploy settings")
    return repo


def _changed_files(project: Path, before: dict[str, str]) -> dict[str, str]:
    """Every file under the project that is new or changed since ``before`` (outputs, kb, research), .git aside."""
    return {
        f"project:{name}": text
        for name, text in files_under(project).items()
        if not name.startswith(".git/") and before.get(name) != text
    }


def _payloads(*fakes: Any) -> dict[str, str]:
    texts: dict[str, str] = {}
    for fake in fakes:
        for number, request in enumerate(fake.requests, start=1):
            body = json.dumps(request.body, ensure_ascii=False) if request.body is not None else ""
            texts[f"{type(fake).__name__} #{number} {request.method} {request.path}"] = request.raw_body + body
    return texts


def test_hostile_repository_holds_ten_secrets(hostile: Path) -> None:
    """The scenario is real: each of the ten is committed raw, and the collector finds every one by value."""
    from fluxdrive.core.secret_values import collect

    assert set(_hostile_leaks(files_under(hostile))) == {secret.name for secret in HOSTILE}
    collected = collect(hostile)
    values = {
        H_AWS_ID, H_AWS_SECRET, H_STRIPE, H_DB_PASSWORD, H_REDIS_PASSWORD, H_ENCRYPTION_KEY, H_MASTER_KEY,
        H_PROSE_PASSWORD, H_SLACK_TOKEN, *H_KEY_LINES[1:-1],
    }  # fmt: skip
    assert values <= collected, sorted(values - collected)


def test_ten_secrets_reach_no_output_publisher_or_store(
    hostile: Path, tmp_path: Path, provider: FakeProvider, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.fakes.github_api import FakeGitHub, pull_files_from_git
    from tests.fakes.gitlab_api import FakeGitLab, merge_request_from_git

    before = files_under(hostile)
    monkeypatch.chdir(hostile)
    results: list[CliResult] = []

    # a. offline research
    results.append(research := cli("research", QUESTION))
    assert research.code == 0, research.err
    assert (hostile / "docs" / "research" / "flux-research").is_dir()

    # b. an llm review of the pull request: the model reads every file, shares and reports all ten
    provider.script(
        "Review task for fd-safety",
        [
            *(ToolCall("read_file", {"path": name}) for name in HOSTILE_FILES),
            ToolCall("grep", {"pattern": "KEY|password|hooks.slack|redis://|sk_live"}),
            ToolCall("share_finding", HOSTILE_SHARED),
            Text(HOSTILE_REPORT),
        ],
    )
    reviewed = cli(
        "review", "--diff", "main", "--yes", "--runtime", "llm", "--model", "openai:gpt-4o",
        "--agents", "fd-safety,fd-quality", "--over-budget", "--fail-on", "never", "--allow-incomplete",
    )  # fmt: skip
    results.append(reviewed)
    assert reviewed.code == 0, reviewed.err
    out = review_dir(hostile)
    run = json.loads((out / "run.json").read_text())
    assert run["agents"]["fd-safety"]["outcome"] == "completed", run["agents"]["fd-safety"]
    assert (out / "summary.html").is_file() and (out / "findings.sarif").is_file()
    tool_results = provider.tool_results("Review task for fd-safety")
    assert len(tool_results) >= len(HOSTILE_FILES), "every read_file ran and its result went back to the model"
    assert "ENCRYPTION_KEY=" in tool_results[0] and "webhook:" in tool_results[2], "the tools read the real files"
    findings = json.loads((out / "findings.json").read_text())["findings"]
    locations = {location for finding in findings for location in finding["locations"]}
    assert {".env:1", "config/aws.yml:3", "README.md:7", "config/alerts.yaml:3"} <= locations, locations

    # c. publish: a GitHub review and a check run, and a GitLab merge request
    with (
        FakeGitHub(token=GH_TOKEN, owner="octo", repo="shop") as github,
        FakeGitLab(token=GL_TOKEN, project_id=42, project_path="octo/shop") as gitlab,
    ):
        sha = _git(hostile, "rev-parse", "HEAD")
        github.add_pull(7, head_sha=sha, files=pull_files_from_git(hostile, "main", "HEAD"))
        gitlab.add_merge_request(3, **merge_request_from_git(hostile, "main", "HEAD"))
        for name, value in {
            "GITHUB_TOKEN": GH_TOKEN, "GITHUB_API_URL": github.url, "GITHUB_REPOSITORY": "octo/shop",
            "GITLAB_TOKEN": GL_TOKEN, "CI_API_V4_URL": gitlab.url, "CI_PROJECT_ID": "42", "CI_MERGE_REQUEST_IID": "3",
        }.items():  # fmt: skip
            monkeypatch.setenv(name, value)
        for name in ("GITHUB_GRAPHQL_URL", "GITHUB_EVENT_PATH", "CI_MERGE_REQUEST_PROJECT_ID", "CI_JOB_TOKEN"):
            monkeypatch.delenv(name, raising=False)
        results.append(posted := cli("publish", "github", out, "--pr", "7", "--sha", sha))
        assert posted.code == 0, posted.err
        results.append(checked := cli("publish", "github", out, "--mode", "checks", "--sha", sha))
        assert checked.code == 0, checked.err
        results.append(noted := cli("publish", "gitlab", out))
        assert noted.code == 0, noted.err
        assert github.calls("POST", r"/repos/octo/shop/pulls/7/reviews"), "a review was posted"
        assert github.calls("POST", r"/repos/octo/shop/check-runs"), "a check run was posted"
        assert gitlab.requests, "the merge request was written to"
        payloads = _payloads(github, gitlab)

    # d. kb remember: a person pasting all ten into the knowledge base
    results.append(remembered := cli("kb", "remember", "Where the keys are", f"Committed: {_QUOTED}"))
    assert remembered.code == 0, remembered.err
    assert list((hostile / ".fluxdrive" / "kb").rglob("*.json")), "the item was queued"

    texts = {
        **_changed_files(hostile, before),
        **_console(*results),
        **_history(),
        **_requests_without_the_models_own_words(provider),
        **{f"tool result #{n}": r for n, r in enumerate(tool_results, start=1)},
        **payloads,
    }
    # e. the HTML report (its code excerpts read the secret lines from the files) is among them
    assert any(name.endswith("summary.html") for name in texts)
    found = _hostile_leaks(texts)
    LEDGER_10["research, llm review, publish github/gitlab, kb remember, HTML"] = found
    assert not found, "; ".join(f"{name} raw in {', '.join(places)}" for name, places in found.items())


def test_ten_secrets_stay_out_of_the_redis_stream(
    hostile: Path, tmp_path: Path, provider: FakeProvider, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import contextlib

    from tests.servers import REDIS_SERVER, redis_server

    if not Path(REDIS_SERVER).is_file():
        pytest.skip("redis-server is not installed: the stream cannot be scanned")
    import redis

    monkeypatch.chdir(hostile)
    provider.script("Review task for fd-safety", [ToolCall("share_finding", HOSTILE_SHARED), Text(HOSTILE_REPORT)])
    (tmp_path / "redis").mkdir()
    with contextlib.ExitStack() as stack:
        try:
            server = stack.enter_context(redis_server(tmp_path / "redis"))
        except RuntimeError as exc:
            pytest.skip(f"redis-server cannot run here: {exc}")
        done = cli(
            "review", "--diff", "main", "--yes", "--runtime", "llm", "--model", "openai:gpt-4o", "--agents",
            "fd-safety", "--over-budget", "--fail-on", "never", "--allow-incomplete", "--set", f"channel.url={server.url}",
        )  # fmt: skip
        assert done.code == 0, done.err
        client: Any = redis.Redis.from_url(server.url)
        stream = {
            f"redis {key!r} {entry_id!r}": repr(fields)
            for key in client.keys("*")
            if client.type(key) == b"stream"
            for entry_id, fields in client.xrange(key)
        }
    assert stream, "the run's peer channel was in the stream"
    found = _hostile_leaks(stream)
    LEDGER_10["Redis stream"] = found
    assert not found, found


# --- the known-value mechanism itself --------------------------------------------------------------------------


def test_known_values_are_masked_only_while_their_run_is_open() -> None:
    from fluxdrive.core.masking import known_secrets, mask_text

    value, other = "Qz7" + _random(_ALNUM, 20), "Wx3" + _random(_ALNUM, 20)
    with known_secrets([value]):
        with known_secrets([other]):  # a second run in the same process (an MCP server): the union is masked
            assert mask_text(f"a {value} b {other} c") == "a **** b **** c"
        assert mask_text(f"{value} {other}") == f"**** {other}"
    assert mask_text(value) == value, "a run's values are forgotten when it ends"


def test_known_values_are_masked_from_every_thread_of_the_run() -> None:
    import threading

    from fluxdrive.core.masking import known_secrets, mask_text

    value = "Rt5" + _random(_ALNUM, 24)
    seen: list[str] = []
    with known_secrets([value]):
        threads = [threading.Thread(target=lambda: seen.append(mask_text(f"x{value}x"))) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert seen == ["x****x"] * 8


def test_longest_known_value_wins() -> None:
    from fluxdrive.core.masking import known_secrets, mask_text

    with known_secrets(["abc123", "abc123def456"]):
        assert mask_text("abc123def456 and abc123!") == "**** and ****!"


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("the staging admin password is Tr0ub4dor&3x.", "the staging admin password is ****."),
        ("password: hunter2-Xy9", "password: ****"),
        ("REDIS_URL=redis://:S3cretPassw0rd@cache:6379/0", "REDIS_URL=redis://:****@cache:6379/0"),
        ("ENCRYPTION_KEY=q8Fz2LmNpQrStUvWx", "ENCRYPTION_KEY=****"),
        ("MASTER_KEY: 9f8e7d6c5b4a3f2e", "MASTER_KEY: ****"),
        (
            "post to https://hooks.slack.com/services/T0AAA1111/B0BBB2222/abcdefghijklmnopqrstuvwx now",
            "post to https://hooks.slack.com/services/**** now",
        ),
        ("MIIEowIBAAKCAQEAq8Fz2LmNpQrStUvWx9f8e7d6c5b4a3f2eq8Fz2LmNpQrSt", "****"),
    ],
)
def test_shapes_a_model_invents_are_masked(text: str, masked: str) -> None:
    assert scrub(text) == masked


@pytest.mark.parametrize(
    "text",
    [
        "the password is stored in vault",
        "the token is refreshed hourly",
        "PRIMARY_KEY = id",
        "redis://cache:6379/0",
        "see https://hooks.example.com/services/status",
    ],
)
def test_prose_about_secrets_is_not_masked(text: str) -> None:
    assert scrub(text) == text


def test_placeholders_links_and_fifos_are_not_collected(tmp_path: Path) -> None:
    """Placeholders would mask ordinary text everywhere; a link out or a FIFO must not be followed or block."""
    from fluxdrive.core.secret_values import collect

    outside = tmp_path / "outside.env"
    outside.write_text(f"API_KEY={API_KEY}\n")
    root = tmp_path / "repo"
    root.mkdir()
    (root / ".env").write_text(
        "PASSWORD=changeme\nAPI_KEY=${API_KEY}\nTOKEN=<your-token>\nSECRET=xxxxxxxx\n"
        "DB_PASSWORD=your_password_here\nAUTH_TOKEN=os.environ.get\nSECRET_FILE=config/secret.json\n"
        f"REAL_PASSWORD={DB_PASSWORD}\n"
    )
    (root / "linked.env").symlink_to(outside)
    os.mkfifo(root / "config.toml")
    assert collect(root) == {DB_PASSWORD}


def test_the_mcp_remember_tool_stores_no_secret_of_the_project(tmp_path: Path) -> None:
    """A caller quoting the project's own secret value (no credential shape of its own) into ``remember``."""
    import asyncio
    import subprocess

    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    value = "Vq7rT2mXw9Lk4sPz8Nd"  # a bare value: only its place in .env makes it a secret
    project = tmp_path / "app"
    project.mkdir()
    (project / ".env").write_text(f"ENCRYPTION_KEY={value}\n")
    (project / "app.py").write_text("def ok():\n    return 1\n")
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    answers: list[str] = []

    async def go() -> None:
        params = StdioServerParameters(
            command=str(Path(sys.executable).parent / "fluxdrive"), args=["mcp"], cwd=str(project)
        )
        with (tmp_path / "mcp-stderr.log").open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=60) as client:
                result = await client.call_tool(
                    "remember", {"title": "Where the key lives", "content": f"The encryption key {value} is in .env."}
                )
                answers.append("".join(getattr(part, "text", "") for part in result.content))

    asyncio.run(go())
    assert answers and answers[0].startswith("Queued"), answers
    stored = [p for p in (project / ".fluxdrive").rglob("*") if p.is_file()]
    assert stored and not [p for p in stored if value in p.read_text(errors="replace")]


def test_a_base64_secret_that_starts_with_a_slash_is_still_masked() -> None:
    """One random base64 key in 64 starts with "/": it was taken for a path and left raw in every output."""
    from fluxdrive.core.secret_values import values_in

    key = "/JePytOKnishpU3TtYG3DQuzgD+52B6C9gVt6jY4"  # the AWS secret access key a CI run generated
    assert key in values_in(f"aws:\n  secret_access_key: {key}\n", "config/aws.yml")
    assert "/etc/ssl/private/key.pem" not in values_in("ssl:\n  private_key: /etc/ssl/private/key.pem\n", "a.yml")


def test_a_letters_only_password_is_masked_but_names_are_not() -> None:
    """A random [A-Za-z0-9] password is all letters one time in fifty at 22 characters; it went unmasked."""
    from fluxdrive.core.secret_values import values_in

    for value in ("VeYdIyfHTosIpOcDyBxFMG", "qPzLmWcRtBvXnKdHsJgF"):  # a CI run's password, another random one
        assert value in values_in(f"DB_PASSWORD={value}\n", ".env")
    for name in ("AWS_SECRET_ACCESS_KEY", "hard-coded", "getUserPassword", "AWSSecretKey", "hardcodedpassword"):
        assert name not in values_in(f"PASSWORD={name}\n", ".env")
