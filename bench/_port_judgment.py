"""Port bench/judgment's cases into eval fixtures (evals/judgment-*), where they fit.

Run by hand (not a benchmark): ``.venv/bin/python bench/_port_judgment.py [--out evals]``. Idempotent: an
existing ``judgment-*`` fixture is replaced, nothing else is touched.

- feature branches and clean changes (``base/`` + the ``branch/`` overlay)
  become **diff** fixtures: ``base/`` and ``change.patch`` (``git diff`` of the
  base against the base with the overlay);
- ``document.md`` cases become **document** fixtures.

Left out: the interflux qualification documents (interflux's own fixtures,
not ours to copy), the big diffs (3,000+ lines each: the suite must run in
under a minute), the stdin and empty-diff variants (the same content as
another case) and the cases that review one file inside a tree (a plan, a
PRD, two API specs: the fixture format reviews document.md or a whole
project). A ground-truth entry with several places keeps its first.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _judgment_corpus import Case, _layer, load_cases

HERE = Path(__file__).resolve().parent
MAX_ADDED_LINES = 1000
DIFF_KINDS = {"feature-branch", "clean"}
DOCUMENT_KINDS = {"document", "clean-document"}


def _location(entry: dict[str, Any]) -> str:
    if entry.get("section"):
        return f"section: {entry['section']}"
    if "line" in entry:
        return f"{entry['file']}:{entry['line']}"
    lines = entry["lines"]
    first = lines[0] if isinstance(lines, list) else lines
    return f"{entry['file']}:{first}"


def _truth(case: dict[str, Any], fixture_id: str) -> dict[str, Any]:
    findings = [
        {
            "severity": entry["severity"],
            "location": _location(entry),
            "description": " ".join(str(entry["description"]).split()),
            "category": entry["category"],
        }
        for entry in case.get("ground_truth") or []
    ]
    source = f"Provenance: {case.get('provenance', '')} License: {case.get('license', '')}"
    notes = " ".join(f"{case.get('title', '')}. Ported from bench/judgment. {case.get('notes', '')} {source}".split())
    return {
        "fixture_id": fixture_id,
        "agent_type": "any",
        "findings": findings,
        "must_not_flag": [],
        "annotator": "fluxdrive team",
        "notes": notes,
    }


def _patch(case: Case) -> tuple[Path, str]:
    """(a directory holding the base tree, the unified diff of the branch over it), built as bench/judgment builds them."""
    scratch = Path(tempfile.mkdtemp(prefix="port-judgment-"))
    base, work = scratch / "base", scratch / "repo"
    base.mkdir()
    _layer(case, "base", base)
    shutil.copytree(base, work)

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=work, capture_output=True, text=True, check=True)
        return done.stdout

    identity = ("-c", "user.name=port", "-c", "user.email=port@example.invalid", "-c", "commit.gpgsign=false")
    git("init", "-q")
    git("add", "-A")
    git(*identity, "commit", "-q", "--allow-empty", "-m", "base")
    _layer(case, "branch", work)
    git("add", "-A")
    return base, git("diff", "--cached", "--no-color", "--no-renames")


def port(out: Path) -> list[str]:
    written = []
    for case in load_cases():
        kind, command = case.kind, case.command
        if "interflux" in case.name:
            continue
        fixture_id = f"judgment-{case.name}"
        target = out / fixture_id
        if kind in DIFF_KINDS and case.spec.get("branch"):
            base, patch = _patch(case)
            if patch.count("\n+") > MAX_ADDED_LINES:  # a big diff: the suite must stay quick
                shutil.rmtree(base.parent)
                continue
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(base, target / "base")
            shutil.rmtree(base.parent)
            (target / "change.patch").write_text(patch, encoding="utf-8")
        elif kind in DOCUMENT_KINDS and command.startswith("fluxdrive review document.md"):
            if target.exists():
                shutil.rmtree(target)
            target.mkdir(parents=True)
            shutil.copy2(case.path / "base" / "document.md", target / "document.md")
        else:
            continue
        truth = _truth(case.spec, fixture_id)
        (target / "ground-truth.json").write_text(json.dumps(truth, indent=2) + "\n", encoding="utf-8")
        written.append(fixture_id)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Port bench/judgment cases into eval fixtures.")
    parser.add_argument("--out", type=Path, default=HERE.parent / "evals", help="the eval suite directory")
    args = parser.parse_args(argv)
    for fixture_id in port(args.out):
        print(fixture_id)
    return 0


if __name__ == "__main__":
    sys.exit(main())
