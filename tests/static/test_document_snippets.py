"""Document reviews that do not cry wolf (issue 30, item 12).

Real reviews (``fluxdrive review DIR --yes``) of documents copied verbatim from real projects
(``data/doc_snippets/README.md`` names each source, commit and licence): code inside Markdown is an
example - lint never fires on it, security rules still do (capped at P2) - and an RFC's own
"Unresolved questions" section is not a defect; a hedged requirement in a requirements section still is.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from fluxdrive.runtimes.static.source import code_blocks, runs_as_code
from tests.conftest import CliResult

Cli = Callable[..., CliResult]
DATA = Path(__file__).parent / "data" / "doc_snippets"
REPO_FIXTURES = Path(__file__).parents[1] / "fixtures" / "interflux"
# Not copied from a project: a tutorial's excerpts as users wrote them in the issue (a top-level
# ``return``, a deliberate bare ``raise``), and one that loads YAML unsafely.
TUTORIAL = """# Tutorial

Return early when there is nothing to do:

```python
if not items:
    return None
```

Re-raise what you cannot handle:

```python
raise
```

Read the settings file:

```python
import yaml

with open("settings.yml") as handle:
    settings = yaml.load(handle)
```
"""


def _review(cli: Cli, tmp_path: Path, files: dict[str, str], *agents: str) -> list[dict[str, object]]:
    root = tmp_path / "docs-project"
    root.mkdir()
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    chosen = ("--agents", ",".join(agents)) if agents else ()
    done = cli("review", root, "--yes", "--fail-on", "never", "--output-dir", out, *chosen)
    assert done.code == 0, done.err
    findings = json.loads((out / "findings.json").read_text())["findings"]
    return findings  # type: ignore[no-any-return]


def _rules(findings: list[dict[str, object]]) -> set[str]:
    return {rule for finding in findings for rule in finding["rules"]}  # type: ignore[attr-defined]


def _copy(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def test_readme_and_tutorial_snippets_raise_no_lint_but_keep_security_capped(cli: Cli, tmp_path: Path) -> None:
    findings = _review(
        cli,
        tmp_path,
        {
            "Readme.md": _copy("express-readme.md"),
            "guide.md": _copy("starlette-docs.md"),
            "tutorial.md": TUTORIAL,
        },
        "fd-safety",
        "fd-quality",
        "fd-correctness",
    )
    rules = _rules(findings)
    lint = {r for r in rules if r.startswith("ruff:") and not r.startswith("ruff:S")}
    assert lint == set(), lint  # F706, PLE0704, F704, PLE1142, F821 ... are excerpts' normal state
    assert "astgrep:js-console-log" not in rules
    assert not {r for r in rules if r in ("fluxdrive:py-missing-docstring", "fluxdrive:py-magic-number")}
    assert "fluxdrive:py-unsafe-deserialization" in rules  # yaml.load on a copied example
    assert {"fluxdrive:py-xss", "ruff:S701"} & rules  # Jinja2Templates(autoescape=False)
    assert all(f["severity"] in ("P2", "P3") for f in findings), [(f["rules"], f["severity"]) for f in findings]


def test_a_markdown_notebook_is_reviewed_as_code() -> None:
    notebook = "---\njupyter:\n  jupytext:\n    format_name: markdown\n---\n\n```python\nreturn 1\n```\n"
    assert runs_as_code(notebook)
    assert not runs_as_code(_copy("express-readme.md"))
    assert not runs_as_code("---\ntitle: Guide\n---\n\n```python\nx = 1\n```\n")
    assert [block.example for block in code_blocks("nb.md", notebook)] == [False]
    assert [block.example for block in code_blocks("Readme.md", _copy("express-readme.md"))] == [True]


def test_an_rfcs_unresolved_questions_are_not_open_questions_without_owner(cli: Cli, tmp_path: Path) -> None:
    plan = "# Migration plan\n\n## Steps\n\n1. Copy the table.\n\n## Open questions\n\n- Which region goes first?\n"
    findings = _review(
        cli,
        tmp_path,
        {"0000-template.md": _copy("rust-rfc-0000-template.md"), "migration-plan.md": plan},
        "fd-user-product",
    )
    places = [
        loc
        for f in findings
        if "fluxdrive:doc-open-questions" in f["rules"]  # type: ignore[operator]
        for loc in f["locations"]  # type: ignore[attr-defined]
    ]
    assert places == ["migration-plan.md:9"]  # a plan about to be carried out still needs an owner


def test_hedged_requirements_are_found_in_requirements_not_in_descriptions(cli: Cli, tmp_path: Path) -> None:
    spec = (
        "# Orders API spec\n\n## Requirements\n\n- The service could return 404 for an archived order.\n"
        "- Responses must include an ETag.\n"
    )
    findings = _review(
        cli,
        tmp_path,
        {"1317-ide.md": _copy("rust-rfc-1317-ide-requirements.md"), "orders-spec.md": spec},
        "fd-perception",
    )
    places = {
        loc
        for f in findings
        if "fluxdrive:doc-hedged-requirements" in f["rules"]  # type: ignore[operator]
        for loc in f["locations"]  # type: ignore[attr-defined]
    }
    assert "orders-spec.md:5" in places  # "The service could return 404": a requirement nobody can test
    assert "1317-ide.md:67" in places  # "The RLS should be safe to use ...": a requirement, hedged
    # "For example, multiple requests for compilation could occur", "There could be multiple clients":
    # what could happen, described - not a requirement
    assert "1317-ide.md:68" not in places
    assert "1317-ide.md:69" not in places


def test_a_listing_is_its_code_not_an_example(cli: Cli, tmp_path: Path) -> None:
    """The reference's code fixtures are a title and one fenced block: the document IS the code under review.

    interflux's fixture-01 (tests/fixtures/interflux, MIT), verbatim: its null dereference is a
    correctness finding, which an example would not get; a caption line is still a listing, a
    paragraph or a badge row makes it a document about its code.
    """
    listing = (REPO_FIXTURES / "fixture-01-null-check" / "document.md").read_text(encoding="utf-8")
    assert runs_as_code(listing)
    assert runs_as_code("# retry.py\n\nThe retry helper, as deployed.\n\n```python\nx = 1\n```\n")
    assert not runs_as_code("# retry.py\n\nA helper.\nIt retries.\n\n```python\nx = 1\n```\n")
    findings = _review(cli, tmp_path, {"document.md": listing}, "fd-correctness", "fd-quality")
    assert any("fd-correctness" in f["agents"] for f in findings), findings  # an example gets security rules only
    readme = "# app.py\n\nHow to load a profile.\nCopy this into your app.\n\n" + listing.split("\n", 1)[1]
    (tmp_path / "readme").mkdir()
    as_example = _review(cli, tmp_path / "readme", {"document.md": readme}, "fd-correctness", "fd-quality")
    assert not any("fd-correctness" in f["agents"] for f in as_example), as_example
