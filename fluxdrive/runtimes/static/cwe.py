"""The CWE of each security rule, from ``fluxdrive/data/rules/cwe.yaml``.

The table maps reported rule ids (``fluxdrive:py-sql-injection``,
``ruff:S608``, ``astgrep:js-eval``, ``detect-secrets:*``) to CWE ids; the
static agent writes them into its Findings Index line (``cwe:CWE-89``), from
where synthesis carries them to findings.json and SARIF. Keeping the table as
data, next to the rules, lets one test prove that every security rule has its
CWE without touching the checks.
"""

from __future__ import annotations

import fnmatch
import functools
from dataclasses import dataclass
from importlib import resources
from typing import Any

from fluxdrive.core.structured import load_yaml

SECURITY_TAGS = frozenset({"security"})


@dataclass(frozen=True, slots=True)
class CweTable:
    """Rule id (exact, or a pattern ending in ``*``) -> CWE ids; CWE id -> name."""

    rules: dict[str, tuple[str, ...]]
    names: dict[str, str]

    def of(self, rule: str) -> tuple[str, ...]:
        """The CWE ids of ``rule`` (empty when it has none)."""
        exact = self.rules.get(rule)
        if exact is not None:
            return exact
        for pattern, cwes in self.rules.items():
            if pattern.endswith("*") and fnmatch.fnmatchcase(rule, pattern):
                return cwes
        return ()


def _parse(data: Any) -> CweTable:
    if not isinstance(data, dict) or not isinstance(data.get("rules"), dict) or not isinstance(data.get("names"), dict):
        raise ValueError("cwe.yaml needs a 'rules' and a 'names' mapping")
    rules = {str(rule): tuple(str(c) for c in cwes) for rule, cwes in data["rules"].items()}
    names = {str(cwe): str(name) for cwe, name in data["names"].items()}
    unnamed = sorted({c for cwes in rules.values() for c in cwes} - set(names))
    if unnamed:
        raise ValueError(f"cwe.yaml: no name for {', '.join(unnamed)}")
    return CweTable(rules, names)


@functools.cache
def cwe_table() -> CweTable:
    """The shipped table (read once per process)."""
    path = resources.files("fluxdrive") / "data" / "rules" / "cwe.yaml"
    return _parse(load_yaml(path.read_text(encoding="utf-8")))


def cwe_of(rule: str) -> tuple[str, ...]:
    """The CWE ids of a reported rule id (empty for rules that are not security weaknesses)."""
    return cwe_table().of(rule)
