#!/bin/sh
# Install the analyzers bench/realcode.py runs beside fluxdrive into their own
# virtualenv, .venv-bench (git-ignored), so that semgrep and its pinned
# dependencies never mix with fluxdrive's .venv. bandit comes with the dev
# extras of .venv (make test); semgrep is installed here from PyPI.
# The rules are not downloaded: bench/realcode.py reads them from a local
# mirror of semgrep/semgrep-rules (fetch github:semgrep/semgrep-rules).
#
#   sh bench/tools.sh            # or PYTHON=python3.12 sh bench/tools.sh
set -eu
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
VENV=${VENV_BENCH:-.venv-bench}
SEMGREP=${SEMGREP:-semgrep==1.185.0}
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$SEMGREP"
"$VENV/bin/semgrep" --version
