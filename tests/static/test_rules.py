"""Every shipped pattern rule fires on its positive examples and not its negatives."""

from __future__ import annotations

import pytest

from fluxdrive.runtimes.static.rules import EXTENSIONS, RuleSpec, load_rules, scan_text

RULES = load_rules()
EXAMPLE_EXTENSION = {language: ext for ext, language in reversed(list(EXTENSIONS.items()))}
EXAMPLE_EXTENSION.update({"dockerfile": "", "any": ".txt"})


def _path(rule: RuleSpec) -> str:
    if rule.examples.path:
        return rule.examples.path
    language = rule.languages[0]
    return "Dockerfile" if language == "dockerfile" else f"example{EXAMPLE_EXTENSION[language]}"


@pytest.mark.parametrize("rule", RULES, ids=[r.id for r in RULES])
def test_rule_matches_its_positive_examples(rule: RuleSpec) -> None:
    for snippet in rule.examples.match:
        hits = [m for m in scan_text(snippet, _path(rule), [rule])]
        assert hits, f"{rule.id} did not fire on:\n{snippet}"
        assert all("{" not in m.title or "}" not in m.title for m in hits), hits[0].title


@pytest.mark.parametrize("rule", RULES, ids=[r.id for r in RULES])
def test_rule_stays_quiet_on_its_negative_examples(rule: RuleSpec) -> None:
    for snippet in rule.examples.no_match:
        hits = scan_text(snippet, _path(rule), [rule])
        assert hits == [], f"{rule.id} fired on:\n{snippet}\n-> {hits[0].text}"


def test_rule_ids_are_prefixed_by_language_and_unique() -> None:
    prefixes = {
        "javascript": "js-",
        "typescript": "ts-",
        "tsx": "js-",
        "go": "go-",
        "java": "java-",
        "ruby": "rb-",
        "php": "php-",
        "bash": "sh-",
        "yaml": ("gha-", "k8s-", "yaml-"),
        "dockerfile": "docker-",
        "any": "any-",
    }
    for rule in RULES:
        expected = prefixes[rule.languages[0]]
        assert rule.id.startswith(expected), rule.id


def test_tags_name_known_agent_areas() -> None:
    known = {"security", "correctness", "quality", "performance", "game-design", "architecture"}
    assert {r.owner_tag for r in RULES} <= known
