"""The HTML report quotes the reviewed code wherever the run's directory is (issue 30, item 8): with
``--output-dir`` outside the project the page showed 0 excerpts, because it looked for the project around
the output directory. A review knows what it reviewed; a run read back from disk still may not widen it."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import committed_copy, run_fluxdrive

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "projects" / "py-webapp"
EXCERPT = '<pre class="excerpt">'


def _excerpts(out: Path) -> int:
    return (out / "summary.html").read_text().count(EXCERPT)


def test_excerpts_do_not_depend_on_where_the_output_directory_is(tmp_path: Path) -> None:
    root = committed_copy(FIXTURE, tmp_path / "shop")
    inside = run_fluxdrive("review", ".", "--yes", "-q", "--output-dir", root / "runs" / "here", cwd=root)
    outside = run_fluxdrive("review", ".", "--yes", "-q", "--output-dir", tmp_path / "elsewhere", cwd=root)
    assert inside.code in (0, 1) and outside.code in (0, 1), inside.err + outside.err
    count = _excerpts(root / "runs" / "here")
    assert count > 0
    assert _excerpts(tmp_path / "elsewhere") == count
    # synthesized again from disk, outside any project: run.json's claim is not trusted, nothing is quoted
    again = run_fluxdrive("synthesize", tmp_path / "elsewhere", cwd=tmp_path)
    assert again.code in (0, 1), again.err
    assert _excerpts(tmp_path / "elsewhere") == 0


def test_file_names_wrap_at_slashes_and_a_file_every_reviewer_skipped_is_said_once(tmp_path: Path) -> None:
    """Issue 30, item 13: the heat map broke names mid-word; a PNG listed all seven agents on its row."""
    root = committed_copy(FIXTURE, tmp_path / "shop")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    out = tmp_path / "out"
    done = run_fluxdrive("review", ".", "--yes", "-q", "--output-dir", out, cwd=root)
    assert done.code in (0, 1), done.err
    page = (out / "summary.html").read_text()
    assert "<code>shop/<wbr>routes.py</code>" in page
    row = next(item.split("</li>")[0] for item in page.split("<li>") if item.startswith("<code>logo.png</code>"))
    assert "skipped by every reviewer (" in row and "fd-safety" not in row
