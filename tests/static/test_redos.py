"""ReDoS: the pattern analysis (tables of advisories and healthy idioms) and the py-redos check.

The analysis tables are the regexes of real ReDoS advisories (each row names its source:
CVE, cpython bpo, OWASP's ReDoS page, a published post-mortem) and healthy patterns real
projects use; the check runs through the real check runner on small modules. Blow-up was
confirmed by hand on Python's ``re`` while writing the tables (``(a+)+b`` on 24 ``a``: 0.6 s,
``(\\w+){1,3}$`` on 3,000 characters: 75 s); the suite does not time anything.
"""

from __future__ import annotations

import pytest

from fluxdrive.runtimes.static.checks.engine.runner import run_python_checks
from fluxdrive.runtimes.static.redos import ambiguities

# (pattern, flavor, flags, full match, kind, source)
VULNERABLE = [
    # (pattern, flavor, flags, full, kind, source)
    (r"^(a+)+$", "python", "", False, "exponential", "OWASP ReDoS page, evil regex 1"),
    (r"([a-zA-Z]+)*", "python", "", True, "exponential", "OWASP ReDoS page, evil regex 2 (whole-string validation)"),
    (r"^(a|aa)+$", "python", "", False, "exponential", "OWASP ReDoS page, evil regex 3"),
    (r"^(a|a?)+$", "python", "", False, "exponential", "OWASP ReDoS page, evil regex 4"),
    (r"^(.*a){12}$", "python", "", False, "exponential", "OWASP ReDoS page, evil regex 5 (x > 10)"),
    (r"^(([a-z])+.)+[A-Z]([a-z])+$", "javascript", "", False, "exponential", "OWASP ReDoS page, Java class name"),
    (
        r"^([a-zA-Z0-9])(([\-.]|[_]+)?([a-zA-Z0-9]+))*(@){1}[a-z0-9]+[.]{1}(([a-z]{2,3})|([a-z]{2,3}[.]{1}[a-z]{2,3}))$",
        "javascript",
        "",
        False,
        "exponential",
        "OWASP ReDoS page, email validation",
    ),
    (
        "(?:.*,)*[ \t]*([^ \t]+)[ \t]+realm=([\"']?)([^\"']*)\\2",
        "python",
        "i",
        False,
        "exponential",
        "CVE-2020-8492 cpython urllib.request AbstractBasicAuthHandler (bpo-39503)",
    ),
    (r"'(''|\\\\|\\'|[^'])*'", "python", "", False, "exponential", "CVE-2023-30608 sqlparse string literal"),
    (
        r"^\s*(?:<\?xml[^>]*>\s*)?(?:<!doctype svg[^>]*\s*(?:\[?(?:\s*<![^>]*>\s*)*\]?)*[^>]*>\s*)?(?:<svg[^>]*>[^]*<\/svg>|<svg[^/>]*\/\s*>)\s*$",
        "javascript",
        "i",
        False,
        "exponential",
        "CVE-2021-28092 is-svg",
    ),
    (r"\+OK.*(<[^>]+>)", "python", "", False, "polynomial", "CVE-2018-1060 cpython poplib apop"),
    (r"\s*#?\s*$", "python", "", False, "polynomial", "CVE-2018-1061 cpython difflib IS_LINE_JUNK"),
    (
        r"^(?P<lead>(?:\(|<|&lt;)*)(?P<middle>.*?)(?P<trail>(?:\.|,|\)|>|\n|&gt;)*)$",
        "python",
        "",
        False,
        "polynomial",
        "CVE-2020-28493 jinja2 urlize _punctuation_re",
    ),
    (
        r"""<([^>]*\srel\s*=\s*['"]?([^'">]+)[^>]*)>""",
        "python",
        "i",
        False,
        "polynomial",
        "CVE-2022-40897 setuptools package_index REL",
    ),
    (
        r"^(?P<namever>(?P<name>.+?)-(?P<ver>.+?))(-(?P<build>\d[^-]*))?-(?P<pyver>.+?)-(?P<abi>.+?)-(?P<plat>.+?)\.whl$",
        "python",
        "",
        False,
        "polynomial",
        "CVE-2022-40898 wheel WHEEL_INFO_RE",
    ),
    (
        r"^(\d\d?)(?:\s+|[-\/])(\w+)(?:\s+|[-\/])(\d+)(?:(?:\s+|:)(\d\d?):(\d\d)(?::(\d\d))?)?\s*(?:([-+]?\d{2,4}|(?![APap][Mm]\b)[A-Za-z]+))?\s*(?:\(\w+\))?\s*$",
        "python",
        "",
        False,
        "polynomial",
        "bpo-38804 cpython http.cookiejar LOOSE_HTTP_DATE_RE",
    ),
    (
        r"^([+-]?\d*n)?\s*(?:([+-]?)\s*(\d+))?$",
        "javascript",
        "",
        False,
        "polynomial",
        "CVE-2021-3803 nth-check RE_NTH_ELEMENT",
    ),
    (
        r"^((?:\d+)?\.?\d+) *(milliseconds?|msecs?|ms|seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d|years?|yrs?|y)?$",
        "javascript",
        "i",
        False,
        "polynomial",
        "CVE-2015-8315 ms",
    ),
    (
        r"^([a-z0-9-]+)[ \t]+([a-zA-Z0-9+\/]+[=]*)([\n \t]+([^\n]+))?$",
        "javascript",
        "",
        False,
        "polynomial",
        "CVE-2018-3737 sshpk",
    ),
    (r"[\{\[].*[\/]*.*[\}\]]$", "javascript", "", False, "polynomial", "CVE-2020-28469 glob-parent enclosure"),
    (
        r"^hwb\(\s*([+-]?\d*[\.]?\d+)(deg)?\s*,\s*([+-]?[\d\.]+)%\s*,\s*([+-]?[\d\.]+)%\s*(?:,\s*([+-]?[\d\.]+)\s*)?\)$",
        "javascript",
        "",
        False,
        "polynomial",
        "CVE-2021-29060 color-string hwb",
    ),
    (
        r"^(([^=;]+))\s*=\s*([^\n\r\0]*)",
        "javascript",
        "",
        False,
        "polynomial",
        "CVE-2017-15010 tough-cookie COOKIE_PAIR",
    ),
    (r"^([a-z0-9]+)-([^?]+)([?\S*]*)$", "javascript", "", False, "polynomial", "CVE-2021-27290 ssri SRI_REGEX"),
    (
        r"^([\s\S]*?)((?:\.{1,2}|[^\\\/]+?|)(\.[^.\/\\]*|))(?:[\\\/]*)$",
        "javascript",
        "",
        False,
        "polynomial",
        "CVE-2021-23343 path-parse splitTailRe",
    ),
    (r"(?:charset|encoding)\s*=\s*['\"]? *([\w\-]+)", "javascript", "i", False, "polynomial", "CVE-2017-16098 charset"),
    (
        r"(?:(?:\"|'|\]|\}|\\|\d|(?:nan|infinity|true|false|null|undefined|symbol|math)|`|\-|\+)+[)]*;?((?:\s|-|~|!|{}|\|\||\+)*.*(?:.*=.*)))",
        "javascript",
        "",
        False,
        "polynomial",
        "Cloudflare WAF outage 2019-07-02 post-mortem",
    ),
]
# (pattern, flavor, flags, what it is)
SAFE = [
    (r"^\d+$", "python", "", "integer"),
    (r"[a-z]+(?:-[a-z]+)*", "python", "", "slug: the separator excludes the body's start"),
    (r"(\r\n|\n)", "python", "", "line ending"),
    (r"\s+", "python", "", "whitespace run"),
    (r"^\d{1,3}(\.\d{1,3}){3}$", "python", "", "IPv4 address"),
    (r"^[\w.+-]+@[\w-]+\.[\w.-]+$", "python", "", "simple email"),
    (
        r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$",
        "javascript",
        "",
        "semver.org official regex",
    ),
    (r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", "python", "i", "UUID"),
    (
        r"^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})?)?$",
        "javascript",
        "",
        "ISO 8601 timestamp",
    ),
    (r"^[A-Za-z_][A-Za-z0-9_]*$", "python", "", "identifier"),
    (r"^#(?:[0-9a-fA-F]{3}){1,2}$", "javascript", "", "hex colour"),
    (r"^[-a-zA-Z0-9_]+\Z", "python", "", "Django validate_slug"),
    (
        r"(?P<static>[^<]*)<(?:(?P<converter>[a-zA-Z_][a-zA-Z0-9_]*)(?:\((?P<args>.*?)\))?\:)?(?P<variable>[a-zA-Z_][a-zA-Z0-9_]*)>",
        "python",
        "",
        "Werkzeug route rule",
    ),
    (r"\s*,\s*", "python", "", "comma list separator"),
    (r"(?:\r\n|\r|\n)", "javascript", "", "any newline"),
    (r"^(\d+)\.(\d+)(?:\.(\d+))?(?:(a|b|rc)(\d+))?$", "python", "", "Python version"),
    (r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$", "javascript", "", "HTTP token (RFC 9110)"),
    (r"^[a-zA-Z][a-zA-Z0-9+.-]*://", "python", "", "URL scheme"),
    (r"\s{2,}", "python", "", "repeated whitespace"),
    (r"^\s*$", "python", "", "blank line"),
    (r"\b\w+\b", "javascript", "g", "words"),
    (r"^(?:\w++\s?)*$", "python", "", "possessive repeat (Python 3.11+)"),
    (r"^(?>\w+\s?)*$", "python", "", "atomic group (Python 3.11+)"),
    (r"^([01]?\d|2[0-3]):[0-5]\d$", "javascript", "", "24h time"),
    (r"^(?:[a-zA-Z0-9-]+\.)+[a-zA-Z]{2,}$", "python", "", "domain name: the dot separates labels"),
    (r"^(?<user>[^@\s]+)@(?<host>[^@\s]+)$", "javascript", "u", "named groups (JavaScript syntax)"),
    (r"^\u{1F600}+$", "javascript", "u", "code point escape"),
    (r"^(a+)+", "python", "", "nested repeat the match can end in: searched, it returns at once"),
    (r"(\w|\d)+$", "python", "", "Python merges single-character alternatives into one class"),
]


# The examples of the brief that is the ReDoS part of issue 28: (pattern, flavor, kind, fragment).
TEXTBOOK = [
    (r"(a+)+b", "python", "exponential", "(a+)+"),
    (r"(a*)*b", "python", "exponential", "(a*)*"),
    (r"(\w+\s?)*$", "python", "exponential", r"(\w+\s?)*"),
    (r"([a-z0-9]+\.?)+@", "javascript", "exponential", r"([a-z0-9]+\.?)+"),
    (r"(a|a)*c", "javascript", "exponential", "(a|a)*"),
    (r"(\w|\d)+$", "javascript", "exponential", r"(\w|\d)+"),
    (r"(a|b|ab)*c", "python", "exponential", "(a|b|ab)*"),
    (r"(?:a+)+?b", "python", "exponential", "(?:a+)+?"),
    (r"\s*\w*\s*x", "python", "polynomial", r"\s*\w*\s*"),
    (r"a*a*b", "javascript", "polynomial", "a*a*"),
    (r"(\w+){1,3}$", "python", "polynomial", r"(\w+){1,3}"),
]


def _kinds(pattern: str, flavor: str, flags: str = "", full: bool = False) -> set[str]:
    return {a.kind for a in ambiguities(pattern, flavor, flags, full=full)}  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("pattern", "flavor", "flags", "full", "kind", "source"), VULNERABLE, ids=[v[5] for v in VULNERABLE]
)
def test_advisory_patterns_are_found(pattern: str, flavor: str, flags: str, full: bool, kind: str, source: str) -> None:
    kinds = _kinds(pattern, flavor, flags, full)
    if kind == "exponential":
        assert "exponential" in kinds, source
    else:
        assert kinds == {"polynomial"}, source  # quadratic advisories are not inflated to exponential


@pytest.mark.parametrize(("pattern", "flavor", "flags", "what"), SAFE, ids=[s[3] for s in SAFE])
def test_healthy_patterns_are_quiet(pattern: str, flavor: str, flags: str, what: str) -> None:
    assert ambiguities(pattern, flavor, flags) == (), what  # type: ignore[arg-type]


@pytest.mark.parametrize(("pattern", "flavor", "kind", "fragment"), TEXTBOOK, ids=[t[0] for t in TEXTBOOK])
def test_textbook_fragments(pattern: str, flavor: str, kind: str, fragment: str) -> None:
    found = ambiguities(pattern, flavor)  # type: ignore[arg-type]
    assert [(a.kind, a.fragment) for a in found] == [(kind, fragment)]


def test_why_names_the_fragment_and_the_cost() -> None:
    (found,) = ambiguities(r"^(\w+\s?)*$", "python")
    assert "`(\\w+\\s?)*`" in found.why and "2^30" in found.why
    (slow,) = ambiguities(r"\s*\w*\s*x", "python")
    assert "square" in slow.why and "spaces" in slow.why


def test_alternations_that_share_no_text_are_not_ambiguous() -> None:
    # `a` and `ab` never match the same text, so `(a|ab)*` parses every input one way (measured: linear)
    assert ambiguities(r"(a|ab)*c", "python") == ()
    assert ambiguities(r"(a|b?)+c", "python") == () and ambiguities(r"(a?)+b", "javascript") == ()


def test_flavors_differ_where_the_engines_do() -> None:
    # Python's parser merges `\w|\d` into one character class, so re runs it in linear time; V8 does not
    assert _kinds(r"(\w|\d)+$", "python") == set()
    assert _kinds(r"(\w|\d)+$", "javascript") == {"exponential"}
    # JavaScript's \d and \w are ASCII only: Arabic digits never overlap them there
    assert _kinds("[\u0660-\u0669]*\\d*x", "javascript") == set()
    assert _kinds("[\u0660-\u0669]*\\d*x", "python") == {"polynomial"}
    assert _kinds("[\u0660-\u0669]*\\d*x", "python", "a") == set()


def test_a_match_that_can_end_in_the_loop_is_only_reported_when_the_whole_input_must_match() -> None:
    assert ambiguities(r"(a+)+", "python") == ()
    assert _kinds(r"(a+)+", "python", full=True) == {"exponential"}
    assert _kinds(r"(a+)+(?:x|$)", "python") == {"exponential"}


def test_flags_change_what_overlaps() -> None:
    assert ambiguities(r"(?:[a-z]+[A-Z])*$", "python") == ()
    assert _kinds(r"(?:[a-z]+[A-Z])*$", "python", "i") == {"exponential"}
    assert _kinds(r"(?i)(?:[a-z]+[A-Z])*$", "python") == {"exponential"}
    assert ambiguities(r"(?:.*\n)*$", "python") == ()  # `.` stops at a newline: one way per line
    assert _kinds(r"(?:.*\n)*$", "python", "s") == {"exponential"}


def test_javascript_syntax_is_translated() -> None:
    assert _kinds(r"^(?<user>[^@\s]+)@(?<host>\w+\s?)*$", "javascript") == {"exponential"}
    assert _kinds(r"^(?:\u{61}+)+$", "javascript", "u") == {"exponential"}
    assert _kinds(r"^(?:\p{L}+\s?)*$", "javascript", "u") == {"exponential"}
    assert _kinds(r"^(a+)\/(?:\k<n>)?(?<n>b)$", "javascript") == set()
    assert ambiguities(r"^[^]*$", "javascript") == ()


def test_unparsable_or_huge_patterns_yield_nothing() -> None:
    assert ambiguities("(a", "python") == ()
    assert ambiguities("[[a-z]--x]+", "python") == ()  # the parser's FutureWarning stays inside
    assert ambiguities("[z-a]", "javascript") == ()
    assert ambiguities("(?:a+)+b" * 1000, "python") == ()
    assert ambiguities("(?:a{10}){10}" * 10, "python") == ()  # unrolls past the position budget


def test_backreferences_and_lookarounds_do_not_raise_alarms() -> None:
    assert ambiguities(r"(['\"])(?:(?!\1).)*\1", "python") == ()
    assert ambiguities(r"^(?=.*\d)(?=.*[a-z]).{8,}$", "javascript") == ()


# --------------------------------------------------------------------------
# The py-redos check, through the real check runner


def _hits(source: str, path: str = "app/views.py") -> list[tuple[str, str]]:
    notes: list[str] = []
    ran = run_python_checks(path, source, ["py-redos"], notes)
    assert notes == []
    return [(r.hit.severity or "", r.hit.title) for r in ran]


FLASK = """
import re
from flask import request

WORDS = re.compile(r"^(\\w+\\s?)*$")

def search():
    return bool(WORDS.match(request.args["q"]))
"""


def test_request_data_through_a_module_constant_is_p1() -> None:
    ((severity, title),) = _hits(FLASK)
    assert severity == "P1"
    assert "`(\\w+\\s?)*`" in title and "request.args" in title and "search()" in title


def test_public_parameter_is_p2_and_polynomial_only_counts_from_the_request() -> None:
    source = """
import re

def words(text):
    return re.findall(r"(\\w+\\s?)*$", text)

def tail(text):
    return re.sub(r"\\s*\\w*\\s*;", "", text)
"""
    assert [s for s, _ in _hits(source)] == ["P2"]


def test_polynomial_from_the_request_is_p2() -> None:
    source = """
import re
from flask import request

def tail():
    return re.sub(r"\\s*\\w*\\s*;", "", request.form["sql"])
"""
    assert [s for s, _ in _hits(source)] == ["P2"]


def test_constant_text_safe_patterns_and_tests_are_quiet() -> None:
    constant = 'import re\n\ndef demo():\n    return re.match(r"(a+)+$", "aaaa")\n'
    safe = 'import re\n\ndef slug(text):\n    return re.fullmatch(r"[a-z]+(?:-[a-z]+)*", text)\n'
    assert _hits(constant) == [] and _hits(safe) == []
    assert _hits(FLASK, path="tests/test_views.py") == []


def test_locals_class_attributes_regex_module_bytes_and_flags() -> None:
    source = """
import re
import regex

class Parser:
    TAG = regex.compile(r"<(?:[a-z]+[A-Z])*>$", regex.IGNORECASE)

    def tags(self, html):
        return self.TAG.findall(html)

def local(data):
    pattern = re.compile(rb"^(?:\\d+\\.?)+$")
    return pattern.fullmatch(data)

def direct(text):
    return re.compile(r"^(a|aa)+$").search(text)
"""
    titles = sorted((t for _, t in _hits(source)), key=lambda t: t.rsplit(" in ", 1)[-1])
    assert [t.rsplit(" in ", 1)[-1] for t in titles] == ["Parser.tags()", "direct()", "local()"]
    assert "self.TAG.findall()" in titles[0] and "(?:[a-z]+[A-Z])*" in titles[0]  # only ambiguous with IGNORECASE
    assert "re.compile().search()" in titles[1]
    assert "pattern.fullmatch()" in titles[2] and "parameter `data`" in titles[2]


def test_fullmatch_makes_a_trailing_loop_fail() -> None:
    source = 'import re\n\ndef check(text):\n    return re.fullmatch(r"([a-zA-Z]+)*", text), re.match(r"([a-zA-Z]+)*", text)\n'
    ((severity, title),) = _hits(source)
    assert severity == "P2" and "fullmatch" in title
