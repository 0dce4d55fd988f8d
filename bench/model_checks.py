"""What grounding and cross-model validation do to precision: the eval suite with a lying scripted model.

Issue 31 asks for the effect measured, not asserted. The reviewer model is scripted at the wire (the
fake provider, tests/fakes/llm_server.py, OpenAI shape): for every case of ``evals/`` it reports the
case's ground truth (severity, location, the description as its title, no quotes) **plus invented
findings numbering 30% of the true ones** (rounded up, at least one), all P0 or P1, drawn
deterministically (seeded by the fixture id) in three kinds, in rotation:

- ``past-end``: a real file of the case cited at a line past its end;
- ``invented-code``: a real line, with a backtick-quoted code fragment that is not in the file;
- ``plausible``: a plausible claim at a real line, no quote: only a checker can catch it.

The checker (``anthropic:claude-sonnet-4-6``, another family, Anthropic shape) behaves like a decent
model, not an oracle: by a hash of the finding's title it rejects 85% of invented findings and wrongly
rejects 5% of true ones. Three configurations, each over the whole suite:

- A: grounding and validation off (``synthesis.grounding = false``, ``validation.enabled = false``);
- B: grounding on, validation off;
- C: grounding and validation on (``validation.checker = ["anthropic:claude-sonnet-4-6"]``).

Analyzer evidence and the reaction round are off in all three, so only the scripted model speaks.

Each case runs as a user would: ``fluxdrive eval run evals/<case> --runtime llm --model openai:gpt-4o
--agents <lane> --json FILE`` in a subprocess, with the configuration in a user config file
($XDG_CONFIG_HOME in a temporary home). One case per process because an agent's prompt does not hold
the reviewed input (the agent reads it with tools from a random scratch directory): nothing in a
request tells the fake which case it belongs to, so the reviewer is scripted before each case by its
agent's name (``Review task for fd-safety``). The case's lane is that agent (``fd-quality`` for a case
of lane ``any``); the eval's own matching and counts score it.

Note what the metrics can show: the eval's precision counts every finding reported, of any severity,
and grounding and validation demote (to P2), never drop; so overall precision cannot move and the
effect is in P0/P1 precision. Recall counts matches whatever the severity a finding ended with, so a
checker's false rejection costs no recall; it shows as a true finding wrongly demoted. A diff case is
not grounded (its added lines need not be in the working tree), so its invented findings reach the
checker in C.

Run: ``.venv/bin/python bench/model_checks.py [--cases N]`` (about 20 minutes for the 73 cases on
two cores; ``--cases 5`` for a quick look). Prints one row per configuration; exits 0.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.fakes, when run as a script

from fluxdrive.contracts.findings_index import IndexEntry
from fluxdrive.eval import find_fixtures
from fluxdrive.eval.fixture import Fixture
from tests.fakes.llm_server import FakeProvider, Text

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "evals"
REVIEWER = "openai:gpt-4o"
CHECKER = "anthropic:claude-sonnet-4-6"
INVENTED_SHARE = 0.30
REJECT_INVENTED = 85  # percent of invented findings the checker rejects
REJECT_TRUE = 5  # percent of true findings it wrongly rejects
KINDS = ("past-end", "invented-code", "plausible")
PLACE = re.compile(r"^(?P<path>.+?):(?P<start>\d+)(?:-(?P<end>\d+))?$")

# Configurations: the user config file of each run.
MODES: dict[str, str] = {
    "A": "[synthesis]\ngrounding = false\n[validation]\nenabled = false\n",
    "B": "[synthesis]\ngrounding = true\n[validation]\nenabled = false\n",
    "C": f'[synthesis]\ngrounding = true\n[validation]\nenabled = true\nchecker = ["{CHECKER}"]\n',
}
COMMON = "[evidence]\nenabled = false\n[reaction]\nenabled = false\n"

# What a model makes up. Claims with no quote (past-end, plausible) and code it "quotes" (invented-code).
CLAIMS = (
    "Missing authorization check before the state change; any caller can trigger it",
    "Shared counter updated without a lock; concurrent requests lose updates",
    "Request value reaches a shell command without escaping",
    "Exception swallowed here hides a failed write from the caller",
    "Unbounded loop over user-supplied input can exhaust memory",
    "Secret value logged in plain text on the error path",
    "Result of the database call is used before the transaction commits",
    "Retry loop has no backoff and hammers the dependency on failure",
    "File handle opened here is never closed on the error path",
    "User-controlled redirect target is followed without validation",
)
CODE = (
    "os.system(cmd + user_input)",
    "pickle.loads(request.data)",
    "eval(payload['expr'])",
    "subprocess.call(args, shell=True)",
    "yaml.load(body, Loader=yaml.Loader)",
    "conn.execute('DELETE FROM ' + table)",
    "hashlib.md5(password.encode())",
    "requests.get(url, verify=False)",
)


@dataclass(frozen=True)
class Claim:
    """One finding the scripted reviewer reports; ``kind`` is "true" or one of KINDS."""

    kind: str
    severity: str
    title: str
    location: str

    @property
    def invented(self) -> bool:
        return self.kind != "true"

    def rejected(self) -> bool:
        """The checker's deterministic judgement (by a hash of the title): a decent model, not an oracle."""
        roll = int(hashlib.sha256(self.title.encode()).hexdigest(), 16) % 100
        return roll < (REJECT_INVENTED if self.invented else REJECT_TRUE)

    def route(self) -> str:
        """The text of the checker's question that names this finding (``Check finding X: P0 <title>``)."""
        return f"{self.severity} {self.title}"


def agent_of(fixture: Fixture) -> str:
    lane = fixture.truth.agent_type
    return "fd-quality" if lane == "any" else lane


def input_root(fixture: Fixture) -> Path:
    """Where the case's cited paths are (a diff case: base/, before its patch)."""
    return {"document": fixture.root, "project": fixture.root / "project", "diff": fixture.root / "base"}[fixture.kind]


def _lines(fixture: Fixture, path: str) -> list[str]:
    try:
        return (input_root(fixture) / path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []


def _title(description: str) -> str:
    """A ground-truth description as an index title: one line, no field separator, no quote to ground."""
    return re.sub(r"\s+", " ", description.replace("`", "'").replace(" | ", " / ").replace("|", "/")).strip()


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text).replace('"', "'")


def claims(fixture: Fixture) -> list[Claim]:
    """The case's true findings, then its invented ones (deterministic: seeded by the fixture id)."""
    truth = [Claim("true", e.severity, _title(e.description), e.location) for e in fixture.truth.findings]
    rng = random.Random(fixture.id)
    paths = sorted({m.group("path") for e in fixture.truth.findings if (m := PLACE.match(e.location))})
    paths = [p for p in paths if _lines(fixture, p)]
    if not paths:
        return truth
    taken = {
        n
        for e in fixture.truth.findings
        if (m := PLACE.match(e.location))
        for n in range(int(m.group("start")) - 3, int(m.group("end") or m.group("start")) + 4)
    }
    invented, start = [], rng.randrange(len(KINDS))  # where the rotation starts: the kinds mix over the suite
    for number in range(max(1, math.ceil(INVENTED_SHARE * len(truth)))):
        kind, path = KINDS[(start + number) % len(KINDS)], paths[number % len(paths)]
        lines = _lines(fixture, path)
        free = [n for n in range(1, len(lines) + 1) if n not in taken and lines[n - 1].strip()] or [1]
        line = rng.choice(free)
        severity = rng.choice(("P0", "P1"))
        claim = rng.choice(CLAIMS)
        if kind == "past-end":
            line = len(lines) + rng.randint(20, 200)
            title = f"{claim} (line {line})"
        elif kind == "invented-code":
            whole = _squash("\n".join(lines))
            code = next(c for c in rng.sample(CODE, len(CODE)) if _squash(c) not in whole)
            title = f"{claim.split(';')[0]} via `{code}`"
        else:
            title = f"{claim} (around line {line})"
        invented.append(Claim(kind, severity, title, f"{path}:{line}"))
    return truth + invented


def report(fixture: Fixture, found: Sequence[Claim]) -> str:
    """The reviewer's answer: a valid Findings Index of ``found``."""
    lines = ["### Findings Index"]
    for number, claim in enumerate(found, 1):
        path = claim.location.split(":")[0]
        lines.append(IndexEntry(claim.severity, f"MC-{number:03d}", path, claim.title, claim.location).render())  # type: ignore[arg-type]
    serious = any(c.severity in ("P0", "P1") for c in found)
    lines += [f"Verdict: {'risky' if serious else 'needs-changes'}", "", "### Summary", f"Review of {fixture.id}."]
    return "\n".join(lines) + "\n"


def script(provider: FakeProvider, fixture: Fixture) -> list[Claim]:
    """Script the reviewer of ``fixture``'s lane and the checker's answer to each of its P0/P1; the claims."""
    found = claims(fixture)
    for claim in found:
        if claim.severity in ("P0", "P1"):
            answer = (
                f"REJECTED: the code at {claim.location} does not show this."
                if claim.rejected()
                else f"CONFIRMED: the code at {claim.location} shows the problem."
            )
            provider.script(claim.route(), [Text(answer)])
    provider.script(f"Review task for {agent_of(fixture)}", [Text(report(fixture, found))])
    return found


@contextmanager
def environment(provider: FakeProvider, mode: str) -> Iterator[dict[str, str]]:
    """A temporary home whose user config is configuration ``mode``, and the providers' URLs and keys."""
    with tempfile.TemporaryDirectory(prefix="fluxdrive-model-checks-") as tmp:
        home = Path(tmp)
        (home / "config" / "fluxdrive").mkdir(parents=True)
        (home / "config" / "fluxdrive" / "config.toml").write_text(MODES[mode] + COMMON, encoding="utf-8")
        yield {
            **{k: v for k, v in os.environ.items() if not k.startswith(("FLUXDRIVE_", "XDG_"))},
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / "config"),
            "XDG_DATA_HOME": str(home / "data"),
            "XDG_STATE_HOME": str(home / "state"),
            "XDG_CACHE_HOME": str(home / "cache"),
            "OPENAI_BASE_URL": provider.base_url_openai,
            "OPENAI_API_KEY": "sk-test-model-checks",
            "ANTHROPIC_BASE_URL": provider.base_url_anthropic,
            "ANTHROPIC_API_KEY": "sk-ant-test-model-checks",
        }


def run_case(fixture: Fixture, env: Mapping[str, str], out: Path) -> dict[str, object]:
    """``fluxdrive eval run`` on one case, as a user runs it; the case's entry of the eval JSON."""
    exe = Path(sys.executable).parent / "fluxdrive"
    command = [str(exe), "eval", "run", str(fixture.root), "--runtime", "llm", "--model", REVIEWER]
    command += ["--agents", agent_of(fixture), "--json", str(out)]
    done = subprocess.run(command, env=dict(env), capture_output=True, text=True, timeout=600, check=False)
    if done.returncode not in (0, 1) or not out.exists():  # 1: the eval's gate failed, which is not ours to judge
        raise SystemExit(f"{fixture.id}: fluxdrive eval run exited {done.returncode}: {done.stderr.strip()[-400:]}")
    document = json.loads(out.read_text(encoding="utf-8"))
    entry: dict[str, object] = document["fixtures"][0]
    return entry


@dataclass
class Tally:
    """One configuration's counts over the suite."""

    expected: int = 0
    found: int = 0
    produced: int = 0
    produced_serious: int = 0
    true_serious: int = 0
    wrongly_demoted: int = 0
    reviewer_calls: int = 0
    checker_calls: int = 0
    invented: int = 0
    invented_in_diffs: int = 0
    errors: int = 0
    seconds: float = 0.0

    def add(self, entry: Mapping[str, object]) -> None:
        counts = entry["counts"]
        assert isinstance(counts, dict)
        for name in ("expected", "found", "produced", "produced_serious", "true_serious"):
            setattr(self, name, getattr(self, name) + int(counts[name]))
        pairs = entry["pairs"]
        assert isinstance(pairs, list)
        self.wrongly_demoted += sum(
            p["expected"]["severity"] in ("P0", "P1") and p["produced"]["severity"] not in ("P0", "P1") for p in pairs
        )
        self.errors += entry["error"] is not None

    def row(self, name: str) -> str:
        def pct(top: int, bottom: int) -> str:
            return f"{100 * top / bottom:5.1f}%" if bottom else "    -"

        return (
            f"{name:<26} {pct(self.found, self.expected):>7} {pct(self.found, self.produced):>7} "
            f"{pct(self.true_serious, self.produced_serious):>7} {self.produced:>6} "
            f"{self.produced_serious - self.true_serious:>8} {self.wrongly_demoted:>8} "
            f"{self.reviewer_calls:>6} {self.checker_calls:>6} {self.seconds:>6.0f}s"
        )


HEADER = (
    f"{'configuration':<26} {'recall':>7} {'prec':>7} {'P0/1pr':>7} {'found':>6} "
    f"{'fake P01':>8} {'true dem':>8} {'review':>6} {'check':>6} {'time':>7}"
)
NAMES = {"A": "A no grounding/validation", "B": "B grounding", "C": "C grounding + validation"}


def measure(fixtures: Sequence[Fixture], mode: str, provider: FakeProvider, scratch: Path) -> Tally:
    tally, started = Tally(), time.monotonic()
    with environment(provider, mode) as env:
        for fixture in fixtures:
            before = len(provider.requests)
            made = sum(c.invented for c in script(provider, fixture))
            tally.invented += made
            tally.invented_in_diffs += made if fixture.kind == "diff" else 0
            tally.add(run_case(fixture, env, scratch / f"{mode}-{fixture.id}.json"))
            asked = provider.requests[before:]
            tally.reviewer_calls += sum(1 for r in asked if r.api == "openai")
            tally.checker_calls += sum(1 for r in asked if r.api == "anthropic")
    tally.seconds = time.monotonic() - started
    return tally


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--cases", type=int, default=0, help="only the first N cases (0: all)")
    parser.add_argument("--suite", type=Path, default=SUITE)
    args = parser.parse_args(argv)
    fixtures = find_fixtures(args.suite)[: args.cases or None]
    tallies = {}
    clean = Text("### Findings Index\nVerdict: safe\n")
    with FakeProvider(default=clean) as provider, tempfile.TemporaryDirectory(prefix="fluxdrive-checks-") as tmp:
        for mode in MODES:
            tallies[mode] = measure(fixtures, mode, provider, Path(tmp))
    a = tallies["A"]
    print(
        f"{len(fixtures)} eval cases; scripted reviewer {REVIEWER}: {a.expected} true findings + {a.invented} "
        f"invented P0/P1 ({INVENTED_SHARE:.0%}; {a.invented_in_diffs} of them in diff cases, where the review keeps "
        f"only findings on changed lines); checker {CHECKER} rejects {REJECT_INVENTED}% of invented, "
        f"{REJECT_TRUE}% of true"
    )
    print(HEADER)
    for mode, tally in tallies.items():
        print(tally.row(NAMES[mode]))
    print(
        "(recall/prec: the eval's, over all ground truth / everything reported; P0/1pr: share of reported P0/P1 "
        "that match ground truth; fake P01: reported P0/P1 matching nothing; true dem: true P0/P1 reported below "
        "P1; review/check: requests to the reviewer / checker model)"
    )
    if any(t.errors for t in tallies.values()):
        print("case errors: " + ", ".join(f"{m} {t.errors}" for m, t in tallies.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
