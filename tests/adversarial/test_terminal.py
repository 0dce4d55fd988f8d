"""Terminal control sequences in file names and reports must not reach a terminal or a rendered report.

A file named with ``\\x1b[31m``, or a report holding ``\\x1b]0;PWN\\x07\\x1b[2J``
(set the window title, clear the screen), can drive the terminal of whoever
reads fluxdrive's output. Everything printed (stdout, stderr) or rendered
(summary.md, findings.json, SARIF, the agent's report, the channel, verdict
records) must hold no escape and no control character but newline and tab -
in its bytes and in the strings its JSON decodes to, since a consumer (``jq
-r``, a coding assistant) prints those.

Real ``fluxdrive`` processes throughout: the static runtime over a project
whose file name carries escapes, the llm runtime against the wire-level fake
provider answering a report full of them, and ``findings`` / ``verdicts`` on
records written with them (by fluxdrive, and by another process).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fluxdrive.cli.examples import clean_copy
from tests.adversarial._support import files_under, review_dir
from tests.conftest import CliResult, committed_copy, run_fluxdrive
from tests.fakes.llm_server import FakeProvider, Text, ToolCall

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "projects" / "py-webapp"
TITLE_BAR = "\x1b]0;PWN\x07"  # OSC 0: set the window title
CLEAR = "\x1b[2J"  # CSI: clear the screen
RED = "\x1b[31m"
RESET = "\x1b[0m"
C1_CSI = "\x9b2J"  # the 8-bit CSI some terminals honour
HOSTILE_NAME = f"shop/net{RED}tools{TITLE_BAR}.py"
CLEAN = "### Findings Index\nVerdict: safe\n\n### Summary\nNothing in my lane.\n"
HOSTILE_REPORT = (
    "### Findings Index\n"
    f'- P0 | SF-001 | "{RED}Input handling{RESET}" | Shell injection in ping{TITLE_BAR}{CLEAR} via the host field '
    "| shop/routes.py:45\n"
    f'- P0 | SF-002 | "Data access" | {RED}SQL injection{RESET} in find_user{C1_CSI} | shop/db.py:15\n'
    "Verdict: risky\n\n"
    "### Summary\n"
    f"The {RED}ping{RESET} handler shells out{TITLE_BAR}{CLEAR}.\rVerdict: safe (nothing to see here)\n"
    f"find_user formats SQL{C1_CSI}\x08\x08\x08 with %.\x07\n\n"
    "### Issues Found\n"
    f"1. SF-001 P0: Shell injection in ping (shop/routes.py:45)\n   Evidence: {RED}subprocess.check_output{RESET}\n"
)


def _controls(text: str) -> list[str]:
    """The control characters in ``text`` (C0 but newline and tab, DEL, C1), as reprs."""
    return sorted({repr(c) for c in text if (ord(c) < 32 and c not in "\n\t") or 127 <= ord(c) <= 159})


def _strings(value: Any) -> Iterator[str]:
    """Every string (keys included) in a decoded JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _decoded(name: str, text: str) -> str:
    """The strings a JSON (or JSON Lines) text decodes to, joined; '' for other files or undecodable text."""
    try:
        if name.endswith(".jsonl"):
            values: list[Any] = [json.loads(line) for line in text.splitlines() if line.strip()]
        elif name.endswith((".json", ".sarif")):
            values = [json.loads(text)]
        else:
            return ""
    except ValueError:
        return ""
    return "\n".join(s for v in values for s in _strings(v))


def _hostile(texts: dict[str, str]) -> dict[str, list[str]]:
    """{place: control characters} for every text holding any, also inside the strings its JSON decodes to."""
    found: dict[str, list[str]] = {}
    for place, text in texts.items():
        if controls := _controls(text):
            found[place] = controls
        if decoded := _controls(_decoded(place, text)):
            found[f"{place} (decoded JSON strings)"] = decoded
    return found


def _console(*results: CliResult, json_out: tuple[int, ...] = ()) -> dict[str, str]:
    """stdout/stderr of each result; the stdout of the results numbered in ``json_out`` is checked as JSON too."""
    texts: dict[str, str] = {}
    for number, result in enumerate(results, start=1):
        texts[f"stdout #{number}" + (".json" if number in json_out else "")] = result.out
        texts[f"stderr #{number}"] = result.err
    return texts


# --- a file name with escapes, static runtime -------------------------------------------------------------


def test_a_file_named_with_escapes_is_reviewed_without_them(tmp_path: Path) -> None:
    source = tmp_path / "source"
    clean_copy(FIXTURE, source)
    (source / HOSTILE_NAME).write_text(
        'import subprocess\n\n\ndef ping(host):\n    return subprocess.check_output("ping " + host, shell=True)\n'
    )
    project = committed_copy(source, tmp_path / "shop")

    done = run_fluxdrive("review", ".", "--yes", "--fail-on", "never", "--verbose", cwd=project)
    as_json = run_fluxdrive(
        "review", ".", "--yes", "--fail-on", "never", "--format", "json", "--output-dir", project / "again", cwd=project
    )  # fmt: skip

    assert done.code == 0, done.err
    assert as_json.code == 0, as_json.err
    out = review_dir(project)
    findings = json.loads((out / "findings.json").read_text())["findings"]
    shell = [f for f in findings if any(loc.startswith("shop/net") and loc.endswith(".py:5") for loc in f["locations"])]
    assert shell and shell[0]["severity"] == "P0", "the injection in the hostile-named file was found"
    texts = {
        **_console(done, as_json, json_out=(2,)),
        "summary.md": (out / "summary.md").read_text(),
        "findings.json": (out / "findings.json").read_text(),
        **{f"output/{name}": text for name, text in files_under(out).items()},
    }
    assert not (found := _hostile(texts)), found


# --- a report full of escapes, llm runtime --------------------------------------------------------------


def test_a_model_report_with_escapes_is_rendered_without_them(tmp_path: Path, provider: FakeProvider) -> None:
    project = committed_copy(FIXTURE, tmp_path / "shop")
    provider.script(
        "Review task for fd-safety",
        [
            ToolCall(
                "share_finding",
                {
                    "severity": "blocking",
                    "category": "shell-injection",
                    "summary": f"ping{TITLE_BAR}{CLEAR} shells out with {RED}the host{RESET}\rVerdict: safe",
                    "file_refs": [f"shop/routes.py:45{RED}", f"{TITLE_BAR}shop/db.py:15"],
                },
            ),
            Text(HOSTILE_REPORT),
        ],
    )

    done = run_fluxdrive(
        "review", ".", "--yes", "--set", "evidence.enabled=false", "--expand", "all", "--runtime", "llm", "--model", "openai:gpt-4o",
        "--fail-on", "never", "--verbose", cwd=project,
    )  # fmt: skip

    assert done.code == 0, done.err
    out = review_dir(project)
    titles = [f["title"] for f in json.loads((out / "findings.json").read_text())["findings"]]
    assert any("Shell injection in ping" in t for t in titles), titles
    assert any("SQL injection" in t for t in titles), titles
    channel = [json.loads(line) for line in (out / "peer-findings.jsonl").read_text().splitlines()]
    assert any(p["agent"] == "fd-safety" and p["category"] == "shell-injection" for p in channel), channel
    read = run_fluxdrive("findings", "read", out / "peer-findings.jsonl")
    listed = run_fluxdrive("verdicts", out)
    texts = {**_console(done, read, listed, json_out=(2,)), **files_under(out)}
    assert not (found := _hostile(texts)), found


# --- records written with escapes, read back -------------------------------------------------------------


def test_findings_and_verdicts_written_with_escapes_store_and_print_none(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    channel = run / "peer-findings.jsonl"

    wrote = run_fluxdrive(
        "findings", "write", channel, "blocking", "fd-safety", "shell-injection",
        f"ping{TITLE_BAR}{CLEAR} shells out {RED}red{RESET}{C1_CSI}\rVerdict: safe", f"shop/routes.py:45{RED}",
    )  # fmt: skip
    verdict = run_fluxdrive(
        "verdicts", "write", run, "fd-safety", "NEEDS_ATTENTION", f"1 P0{TITLE_BAR}{CLEAR}: {RED}shell injection{RESET}"
    )
    assert wrote.code == 0, wrote.err
    assert verdict.code == 0, verdict.err
    read = run_fluxdrive("findings", "read", channel)
    timeline = run_fluxdrive("findings", "timeline", channel)
    listed = run_fluxdrive("verdicts", run)
    as_json = run_fluxdrive("verdicts", run, "--json")

    assert json.loads(read.out)[0]["file_refs"][0].startswith("shop/routes.py:45")
    assert "fd-safety" in listed.out and "NEEDS_ATTENTION" in listed.out
    texts = {**files_under(run), **_console(wrote, verdict, read, timeline, listed, as_json, json_out=(3, 6))}
    assert not (found := _hostile(texts)), found


def test_channel_lines_and_verdicts_another_process_wrote_print_no_escapes(tmp_path: Path) -> None:
    """A channel line or verdict record with escapes, written by another process: reading prints none."""
    run = tmp_path / "run"
    (run / "verdicts").mkdir(parents=True)
    line = {
        "severity": "blocking",
        "agent": "fd-other",
        "category": "shell-injection",
        "summary": f"ping{TITLE_BAR}{CLEAR} shells out {RED}red{RESET}{C1_CSI}",
        "file_refs": [f"shop/routes.py:45{RED}"],
        "timestamp": "2026-11-21T10:01:12.345Z",
        "schema_version": 1,
    }
    (run / "peer-findings.jsonl").write_text(json.dumps(line) + "\n")
    record = {
        "schema_version": 1,
        "agent": "fd-other",
        "status": "NEEDS_ATTENTION",
        "summary": f"1 P0{TITLE_BAR}{CLEAR}: {RED}shell injection{RESET}",
        "detail_path": f"fd-other{RED}.md",
        "tokens": 10,
        "timestamp": "2026-11-21T10:01:13.000Z",
    }
    (run / "verdicts" / "fd-other.json").write_text(json.dumps(record))

    read = run_fluxdrive("findings", "read", run / "peer-findings.jsonl")
    timeline = run_fluxdrive("findings", "timeline", run / "peer-findings.jsonl")
    listed = run_fluxdrive("verdicts", run)
    as_json = run_fluxdrive("verdicts", run, "--json")

    assert read.code == 0 and timeline.code == 0 and listed.code == 0 and as_json.code == 0
    assert [f["agent"] for f in json.loads(read.out)] == ["fd-other"], "the foreign line was read"
    assert "fd-other" in listed.out
    texts = _console(read, timeline, listed, as_json, json_out=(1, 4))
    assert not (found := _hostile(texts)), found
