"""Argument injection (CWE-88): a value from outside becomes an option of the program an argument list runs.

Every case goes through the real check runner on source text, the way a review runs it; the
severity says what the data flow proved (the request into git: P0; a public function's
parameter into git: P1; a request value into a harmless program: P1; the project's own values,
the command line, a "--" or a dash guard: nothing).
"""

from __future__ import annotations

import textwrap

import pytest

from fluxdrive.runtimes.static.checks.engine.runner import run_python_checks
from fluxdrive.runtimes.static.checks.safety_arguments import refuses_dash

CHECKS = ["py-argument-injection", "py-command-injection"]


def _found(source: str, path: str = "app/vcs.py") -> dict[int, tuple[str, str, str | None]]:
    notes: list[str] = []
    hits = run_python_checks(path, textwrap.dedent(source), CHECKS, notes)
    assert notes == [], notes
    return {h.hit.line: (h.spec.name, h.hit.title, h.hit.severity) for h in hits}


def _severities(source: str, path: str = "app/vcs.py") -> dict[int, str | None]:
    return {line: severity for line, (_, _, severity) in _found(source, path).items()}


MIRROR = """\
import subprocess
from flask import request


def mirror():
    url = request.args["url"]
    subprocess.run(["git", "clone", url, "/srv/mirror"], check=True)
"""


def test_a_request_value_passed_to_git_clone_is_p0() -> None:
    found = _found(MIRROR)
    assert list(found) == [7]
    rule, title, severity = found[7]
    assert rule == "py-argument-injection" and severity == "P0"
    assert "`url`" in title and "request.args" in title and "option of git" in title and "in mirror()" in title


def test_a_separator_before_the_value_is_no_finding() -> None:
    assert _found(MIRROR.replace('"clone", url', '"clone", "--", url')) == {}
    assert _found(MIRROR.replace('"clone", url', '"clone", "--end-of-options", url')) == {}


@pytest.mark.parametrize(
    "guard",
    [
        'if url.startswith("-"):\n        raise ValueError("bad url")',
        'if url.startswith(("-", "+")):\n        return "bad url"',
        'if url[0] == "-":\n        raise ValueError("bad url")',
        'if url[:1] == "-":\n        raise ValueError("bad url")',
        'if url.lstrip("-") != url:\n        raise ValueError("bad url")',
        'if not url.startswith(("https://", "git@")):\n        raise ValueError("bad url")',
        'if not re.match(r"^[A-Za-z0-9]", url):\n        raise ValueError("bad url")',
        'if not re.fullmatch(r"[\\w.:/@]+", url):\n        raise ValueError("bad url")',
        'if not SAFE_URL.match(url):\n        raise ValueError("bad url")',
        'assert not url.startswith("-")',
    ],
)
def test_a_guard_refusing_a_leading_dash_is_no_finding(guard: str) -> None:
    source = MIRROR.replace("import subprocess", 'import re\nimport subprocess\nSAFE_URL = re.compile(r"\\A[a-z]")')
    source = source.replace('    subprocess.run(["git"', f'    {guard}\n    subprocess.run(["git"')
    assert _found(source) == {}, source


def test_a_guard_that_does_not_refuse_a_dash_does_not_count() -> None:
    for guard in (
        'if url.startswith("--"):\n        raise ValueError("bad url")',  # -oProxyCommand=... still passes
        'if not re.search(r"[a-z]", url):\n        raise ValueError("bad url")',  # not anchored
        'if not re.match(r"[-\\w]+", url):\n        raise ValueError("bad url")',  # the class allows "-"
        'if url.startswith("-"):\n        print("odd url")',  # warns, runs anyway
    ):
        source = MIRROR.replace("import subprocess", "import re\nimport subprocess")
        source = source.replace('    subprocess.run(["git"', f'    {guard}\n    subprocess.run(["git"')
        assert list(_severities(source).values()) == ["P0"], guard


def test_the_call_inside_a_no_dash_branch_is_no_finding() -> None:
    source = MIRROR.replace(
        '    subprocess.run(["git", "clone", url, "/srv/mirror"], check=True)',
        '    if not url.startswith("-"):\n        subprocess.run(["git", "clone", url, "/srv/mirror"], check=True)',
    )
    assert _found(source) == {}


def test_a_value_attached_to_an_option_or_after_fixed_text_cannot_become_one() -> None:
    source = """\
    import subprocess
    from flask import request


    def mirror():
        depth = request.args["depth"]
        branch = request.args["branch"]
        subprocess.run(["git", "clone", f"--depth={depth}", "--branch=" + branch, "https://example.com/a.git"])
        subprocess.run(["git", "fetch", "origin", f"refs/heads/{branch}", "--format=%s" % depth])
        subprocess.run(["git", "log", "--grep={}".format(branch)])
    """
    assert _found(source) == {}


def test_an_option_name_chosen_by_the_request_is_reported() -> None:
    source = """\
    import subprocess
    from flask import request


    def mirror():
        flag = request.args["flag"]
        subprocess.run(["git", "clone", f"--{flag}", "https://example.com/a.git"])
    """
    assert _severities(source) == {7: "P0"}


def test_constant_lists_and_numbers_are_no_finding() -> None:
    source = """\
    import subprocess
    from flask import request


    def status(count: int):
        subprocess.check_output(["git", "status", "--porcelain"])
        subprocess.check_output(["git", "log", "-n", str(count)])
        subprocess.check_output(["git", "log", "-n", str(int(request.args["n"]))])
    """
    assert _found(source) == {}


def test_a_public_function_parameter_into_git_is_p1() -> None:
    source = """\
    import subprocess


    def clone(url, dest):
        subprocess.run(["git", "clone", url, dest], check=True)


    def _clone(url, dest):
        subprocess.run(["git", "clone", url, dest], check=True)


    def show(name):
        return subprocess.check_output(["cat", name])
    """
    found = _found(source)
    # a private helper's parameter is unknown; a harmless program's parameter is the caller's business
    assert {line: severity for line, (_, _, severity) in found.items()} == {5: "P1"}
    assert found[5][1].startswith("Parameter `url` becomes an option of git")


def test_a_request_value_into_any_program_is_p1() -> None:
    source = """\
    import subprocess
    from flask import request


    def convert():
        return subprocess.check_output(["pandoc", request.form["name"], "-t", "html"])
    """
    assert _severities(source) == {6: "P1"}


def test_a_list_built_in_the_function_is_followed_in_order() -> None:
    source = """\
    import subprocess
    from flask import request


    def fetch():
        url = request.json["url"]
        cmd = ["git", "clone", "--quiet"]
        cmd.append(url)
        cmd += ["/srv/checkout"]
        subprocess.check_call(cmd)


    def fetch_safely():
        url = request.json["url"]
        cmd = ["git", "clone"]
        cmd.extend(["--", url])
        subprocess.check_call(cmd)


    def fetch_inserted():
        url = request.json["url"]
        params = [url]
        params.insert(0, "--")
        subprocess.check_call(["hg", "clone", *params])
    """
    assert _severities(source) == {8: "P0"}  # reported where the value enters the list


def test_exec_and_asyncio_argument_vectors() -> None:
    source = """\
    import asyncio
    import os
    from flask import request


    async def sync():
        host = request.args["host"]
        await asyncio.create_subprocess_exec("rsync", "-a", host, "/srv/backup")


    def replace_process():
        os.execvp("ssh", ["ssh", request.args["host"], "uptime"])


    def spawn():
        os.spawnlp(os.P_WAIT, "tar", "tar", "xf", request.args["archive"])
    """
    assert _severities(source) == {8: "P0", 12: "P0", 16: "P0"}


def test_the_program_chosen_by_the_request_is_left_to_command_injection() -> None:
    source = """\
    import subprocess
    from flask import request


    def run():
        tool = request.args["tool"]
        subprocess.run([tool, request.args["arg"]])
        subprocess.run(["sh", "-c", request.args["script"]])
    """
    found = _found(source)
    assert [rule for rule, _, _ in found.values()] == ["py-command-injection"]  # the sh -c line only


def test_a_program_known_by_its_subcommand_and_a_sudo_wrapper() -> None:
    source = """\
    import subprocess


    def checkout(repo_type, ref):
        subprocess.check_output([repo_type, "checkout", ref])


    def deploy(url):
        subprocess.run(["sudo", "-u", "deploy", "git", "clone", url])


    def install(package):
        subprocess.run([sys.executable, "-m", "pip", "install", package])
    """
    found = _found(source)
    assert {line: severity for line, (_, _, severity) in found.items()} == {5: "P1", 9: "P1"}
    assert "option of the version-control tool `repo_type`" in found[5][1] and "option of git" in found[9][1]


def test_values_the_project_owns_and_the_command_line_are_no_finding() -> None:
    source = """\
    import argparse
    import subprocess


    class Repo:
        def __init__(self):
            self.path = "/srv/repo"

        def pull(self):
            subprocess.run(["git", "-C", self.path, "pull", self.remote])


    def main():
        args = argparse.ArgumentParser().parse_args()
        subprocess.run(["git", "clone", args.url])


    def run_git(*args):
        return subprocess.run(["git", *args], check=True)
    """
    assert _found(source) == {}


def test_test_modules_are_not_reviewed_for_options() -> None:
    source = "import subprocess\n\ndef clone(url):\n    subprocess.run(['git', 'clone', url])\n"
    assert _found(source, "tests/test_clone.py") == {}
    assert _severities(source) == {4: "P1"}


@pytest.mark.parametrize(
    ("pattern", "anchored", "refuses"),
    [
        (r"^[A-Za-z0-9]", True, True),
        (r"[\w.]+", True, True),
        (r"\A\w", False, True),
        (r"^[^-]", True, True),
        (r"^[^-][\w-]*$", True, True),
        (r"^[-\w]+", True, False),
        (r"^[\w\-]+", True, False),
        (r"^[+-/]", True, False),
        (r"^\W", True, False),
        (r"^[a-z]?", True, False),
        (r"^(a|-)", True, False),
        (r"[a-z]", False, False),
        (r".*", True, False),
        (r"^[a-z", True, False),
    ],
)
def test_which_patterns_refuse_a_leading_dash(pattern: str, anchored: bool, refuses: bool) -> None:
    assert refuses_dash(pattern, anchored=anchored) is refuses


def test_a_django_management_command_runs_with_the_operators_values() -> None:
    source = """\
    import subprocess
    from django.core.management.base import BaseCommand


    class Command(BaseCommand):
        def update_git(self, url, branch):
            subprocess.check_call(["git", "fetch", url, branch])
    """
    assert _found(source, "docs/management/commands/update_docs.py") == {}


def test_the_finding_is_on_the_line_where_the_value_enters_the_list() -> None:
    source = """\
    import subprocess


    def clone(repo_url, checkout):
        subprocess.check_output(  # nosec - bandit's B603 judged the call, not the values
            ["git", "clone", "--", repo_url],
        )
        subprocess.check_output(  # nosec
            ["git", "checkout", checkout],
        )
    """
    assert _severities(source) == {9: "P1"}
