"""What the adversarial modules share: where a review wrote, and everything it wrote."""

from __future__ import annotations

from pathlib import Path


def review_dir(project: Path) -> Path:
    """The (only) default output directory of a review of ``project``."""
    return next((project / "docs" / "research" / "flux-drive").glob("[!.]*/"))  # the run links, not .fluxdrive-runs


def files_under(directory: Path) -> dict[str, str]:
    """Every file under ``directory`` (hidden ones included, links not followed), decoded leniently."""
    return {
        str(path.relative_to(directory)): path.read_bytes().decode("utf-8", errors="replace")
        for path in sorted(directory.rglob("*"))
        if path.is_file() and not path.is_symlink()
    }
