"""The input profile: sections, diff stats, languages, divergences, big files (PROTOCOL.md 2.3)."""

from __future__ import annotations

import json
from pathlib import Path

from fluxdrive.triage.profile import MAX_UNITS, build_profile, document_sections
from fluxdrive.workspace import resolve_target

PLAN = (
    """# Migration plan

## Context
One line only.

## Steps
- add the column
- backfill it
- switch readers
- drop the old column

## Risks
"""
    + "\n".join(f"Risk paragraph line {i}." for i in range(32))
    + """

```sql
-- fenced lines are not prose
SELECT 1;
```
"""
)


def test_document_sections_are_labelled_thin_adequate_deep() -> None:
    sections, units = document_sections(PLAN)
    labels = {s.title: (s.prose_lines, s.bullets, s.label) for s in sections}
    assert labels["Context"] == (1, 0, "thin")
    assert labels["Steps"] == (0, 4, "adequate")
    assert labels["Risks"] == (32, 0, "deep")
    assert [u.section for u in units] == ["Migration plan", "Context", "Steps", "Risks"]


def test_document_profile(make_project) -> None:  # type: ignore[no-untyped-def]
    root = make_project({"docs/migration-plan.md": PLAN, "CLAUDE.md": "# Project notes\n"}, repository=True)
    profile = build_profile(resolve_target(str(root / "docs/migration-plan.md")))
    assert profile.kind == "document" and profile.document_type == "plan"
    assert [s.title for s in profile.thin_sections()] == ["Migration plan", "Context"]
    assert profile.project.has_claude_md and profile.project.has_project_docs
    data = profile.to_json()
    assert data["schema_version"] == 1 and "units" not in data
    json.dumps(data)


def test_diff_stats(make_project) -> None:  # type: ignore[no-untyped-def]
    diff = (
        "diff --git a/db/migrate.sql b/db/migrate.sql\nnew file mode 100644\n--- /dev/null\n+++ b/db/migrate.sql\n"
        "@@ -0,0 +1,2 @@\n+CREATE INDEX users_email ON users(email);\n+CREATE INDEX orders_user ON orders(user_id);\n"
        "diff --git a/old.py b/old.py\ndeleted file mode 100644\n--- a/old.py\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-x = 1\n"
        "diff --git a/a.py b/b.py\nsimilarity index 100%\nrename from a.py\nrename to b.py\n"
        "diff --git a/logo.png b/logo.png\nBinary files a/logo.png and b/logo.png differ\n"
        "diff --git a/app.py b/app.py\n--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n x = 1\n-y = 2\n+y = 3\n"
    )
    root = make_project({"app.py": "x\n"}, repository=True)
    profile = build_profile(resolve_target("-", stdin_text=diff, cwd=root))
    stats = profile.diff
    assert stats is not None
    assert (stats.files, stats.hunks, stats.added, stats.removed) == (5, 3, 3, 2)
    assert stats.new == ["db/migrate.sql"] and stats.deleted == ["old.py"] and stats.renamed == ["b.py"]
    assert stats.binary == ["logo.png"]
    assert profile.complexity == "small" and profile.total_lines == 5


def test_directory_languages_frameworks_and_divergences(make_project) -> None:  # type: ignore[no-untyped-def]
    root = make_project(
        {
            "package.json": '{"dependencies": {"express": "^4"}}',
            "pyproject.toml": '[project]\nname = "x"\ndependencies = ["flask>=3", "requests"]\n',
            "app/main.py": "import flask\nimport os\nfrom requests import get\n" + "x = 1\n" * 20,
            "tools/run.sh": "#!/bin/bash\necho hi\n",
            "bin/tool": "#!/usr/bin/env python3\nprint('x')\n",
        },
        repository=True,
    )
    profile = build_profile(resolve_target(str(root)))
    assert profile.languages["python"] > profile.languages["shell"] > 0
    assert profile.mixed_languages
    assert "flask" in profile.frameworks and "requests" in profile.frameworks and "os" not in profile.frameworks
    assert profile.project.divergences == ["package.json claims javascript/typescript but no such files are present"]


def test_big_file_is_streamed_into_bounded_units(tmp_path: Path) -> None:
    big = tmp_path / "huge.py"
    line = "value = compute(value, 42)  # keep going\n"
    with big.open("w") as handle:
        for _ in range(50_000_000 // len(line)):
            handle.write(line)
    profile = build_profile(resolve_target(str(big)))
    assert profile.total_lines == 50_000_000 // len(line)
    assert len(profile.units) <= MAX_UNITS
    assert sum(u.weight for u in profile.units) == profile.total_lines
