"""Public code-review benchmarks turned into eval fixtures (``fluxdrive eval import FORMAT SOURCE DIR``).

One module per benchmark format, each exposing an :class:`~fluxdrive.eval.importers.base.Importer`;
``IMPORTERS`` maps the FORMAT name a user types to it, so a new benchmark is one module and one line here.
"""

from __future__ import annotations

from pathlib import Path

from fluxdrive.errors import UsageError
from fluxdrive.eval.importers import aacr, ossf_cve
from fluxdrive.eval.importers.base import Importer, Options, Summary

IMPORTERS: dict[str, Importer] = {
    "aacr": aacr.IMPORTER,
    "ossf-cve": ossf_cve.IMPORTER,
}

__all__ = ["IMPORTERS", "Importer", "Options", "Summary", "import_benchmark"]


def import_benchmark(name: str, source: Path, out: Path, options: Options) -> Summary:
    """Import benchmark ``source`` (in format ``name``) as fixtures under ``out``; UsageError on bad input."""
    importer = IMPORTERS.get(name)
    if importer is None:
        raise UsageError(f"unknown benchmark format {name!r}: expected one of {', '.join(sorted(IMPORTERS))}")
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out}: exists and is not a directory")
    return importer.run(source, out, options)
