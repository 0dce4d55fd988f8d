"""Every security rule of the static runtime names its CWE (fluxdrive/data/rules/cwe.yaml).

New checks, pattern rules and ruff codes cannot forget it: the table is
checked against the check registry, the shipped pattern rules, ruff.yml and
the S codes the installed ruff has.
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from fluxdrive.runtimes.static.analyzers.ruff import ruff_executable, ruff_table
from fluxdrive.runtimes.static.checks.engine.registry import registered_checks
from fluxdrive.runtimes.static.compose import hit_cwe
from fluxdrive.runtimes.static.cwe import SECURITY_TAGS, CweTable, _parse, cwe_of, cwe_table
from fluxdrive.runtimes.static.hits import Claim, Hit
from fluxdrive.runtimes.static.rules import load_rules

CWE_ID = re.compile(r"^CWE-[1-9]\d{0,4}$")


def test_every_security_check_has_a_cwe() -> None:
    security = [spec for spec in registered_checks().values() if spec.tag in SECURITY_TAGS]
    assert len(security) >= 20
    missing = [spec.rule_id for spec in security if not cwe_of(spec.rule_id)]
    assert missing == [], f"add these checks to fluxdrive/data/rules/cwe.yaml: {missing}"
    assert cwe_of("fluxdrive:py-sql-injection") == ("CWE-89",)
    assert cwe_of("fluxdrive:py-ldap-injection") == ("CWE-90",)
    assert cwe_of("fluxdrive:py-xpath-injection") == ("CWE-643",)
    assert cwe_of("fluxdrive:py-open-redirect") == ("CWE-601",)
    assert cwe_of("fluxdrive:py-trust-boundary") == ("CWE-501",)


def test_every_security_pattern_rule_has_a_cwe() -> None:
    security = [spec for spec in load_rules() if spec.owner_tag in SECURITY_TAGS]
    assert len(security) >= 30
    missing = [spec.rule_id for spec in security if not cwe_of(spec.rule_id)]
    assert missing == [], f"add these rules to fluxdrive/data/rules/cwe.yaml: {missing}"


def test_every_ruff_s_code_has_a_cwe() -> None:
    table = ruff_table()
    named = {
        code
        for section in ("superseded", "ignored", "codes")
        for code in table.get(section, {})
        if re.fullmatch(r"S\d{3}", code)
    }
    assert {"S608", "S701", "S324"} <= named
    executable = ruff_executable()
    if executable is None:  # pragma: no cover - ruff is a runtime dependency
        pytest.skip("ruff is not installed")
    listed = subprocess.run(
        [executable, "rule", "--all", "--output-format", "json"], capture_output=True, text=True, check=True
    )
    bandit = {r["code"] for r in json.loads(listed.stdout) if r.get("linter") == "flake8-bandit"}
    assert len(bandit) >= 60
    missing = sorted(code for code in named | bandit if not cwe_of(f"ruff:{code}"))
    assert missing == [], f"add these ruff codes to fluxdrive/data/rules/cwe.yaml: {missing}"
    assert cwe_of("ruff:S608") == ("CWE-89",)
    assert cwe_of("ruff:S602") == cwe_of("ruff:S605") == ("CWE-78",)
    assert cwe_of("ruff:S301") == ("CWE-502",)
    assert cwe_of("ruff:S105") == cwe_of("ruff:S106") == ("CWE-259",)
    assert cwe_of("ruff:S501") == ("CWE-295",)
    assert cwe_of("ruff:S701") == ("CWE-79",)
    assert "CWE-327" in cwe_of("ruff:S324")


def test_secrets_and_non_security_rules() -> None:
    assert cwe_of("detect-secrets:aws-access-key") == ("CWE-798",)
    assert cwe_of("detect-secrets:private-key") == ("CWE-798",)
    assert cwe_of("ruff:B023") == () and cwe_of("lizard:complexity") == ()
    assert cwe_of("fluxdrive:py-magic-number") == ()


def test_table_is_well_formed() -> None:
    table = cwe_table()
    for rule, cwes in table.rules.items():
        assert cwes and all(CWE_ID.match(c) for c in cwes), rule
        assert len(set(cwes)) == len(cwes), rule
    assert all(CWE_ID.match(c) and name.strip() for c, name in table.names.items())
    with pytest.raises(ValueError, match="no name for CWE-1"):
        _parse({"rules": {"x:y": ["CWE-1"]}, "names": {}})
    assert CweTable({"a:*": ("CWE-2",)}, {}).of("a:b") == ("CWE-2",)


def test_a_cwe_named_by_the_hit_wins_over_the_table() -> None:
    def hit(rule: str, title: str) -> Hit:
        return Hit(rule, Claim("checks", "security"), "P1", "app.py", 3, title, "why", "fix")

    declared = hit("fluxdrive:py-tainted-call", "Data from request.args reaches requests.get(): SSRF (CWE-918) in f()")
    assert hit_cwe(declared) == ("CWE-918",)
    assert hit_cwe(hit("fluxdrive:py-tainted-call", "Data from request.args reaches db.raw()")) == ("CWE-20",)
