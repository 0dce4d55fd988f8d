"""Other analyzers' results as evidence in a review: ``fluxdrive review --import-sarif FILE``.

A team already runs semgrep, CodeQL or bandit; fluxdrive reads their SARIF
2.1.0 files (:mod:`fluxdrive.imports.sarif`) and merges each result into the
review's findings (:mod:`fluxdrive.imports.merge`): a result at a finding's
place about the same weakness corroborates it (counted once, its tool and
rule named, convergence and confidence raised); any other result is a
finding of its own. One ranked list, whatever found it.
"""

from fluxdrive.imports.merge import ImportScope, apply_imports
from fluxdrive.imports.sarif import ImportedResult, SarifError, SarifImport, load_imports, load_sarif

__all__ = [
    "ImportScope",
    "ImportedResult",
    "SarifError",
    "SarifImport",
    "apply_imports",
    "load_imports",
    "load_sarif",
]
