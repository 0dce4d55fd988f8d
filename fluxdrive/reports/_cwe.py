"""CWE names and links for the SARIF taxonomy (names from ``fluxdrive/data/rules/cwe.yaml``)."""

from __future__ import annotations

import functools
from importlib import resources

from fluxdrive.core.structured import load_yaml

CWE_URI = "https://cwe.mitre.org/"


@functools.cache
def cwe_names() -> dict[str, str]:
    """``CWE-89`` -> its title in the CWE list (the CWEs fluxdrive's rules name)."""
    path = resources.files("fluxdrive") / "data" / "rules" / "cwe.yaml"
    data = load_yaml(path.read_text(encoding="utf-8"))
    names = data.get("names") if isinstance(data, dict) else None
    return {str(k): str(v) for k, v in names.items()} if isinstance(names, dict) else {}


def cwe_number(cwe: str) -> str:
    """``CWE-89`` -> ``89``."""
    return cwe.rsplit("-", 1)[-1]


def cwe_url(cwe: str) -> str:
    """The CWE's definition page."""
    return f"{CWE_URI}data/definitions/{cwe_number(cwe)}.html"


def cwe_tag(cwe: str) -> str:
    """GitHub code scanning's tag form: ``external/cwe/cwe-89``."""
    return f"external/cwe/cwe-{cwe_number(cwe)}"
