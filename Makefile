# fluxdrive - developer entry points. Needs only python3 (3.11+), git and make.
#
#   make review TARGET=<path>
#                 bootstrap .venv, then review TARGET offline (static runtime);
#                 FAIL_ON=risky fails make on a risky verdict; ARGS="--verbose" passes other options
#   make test     bootstrap .venv with the dev extras, then lint, type-check, test
#   make bench    run every benchmark in bench/ and print its figures
#   make eval     run the static runtime over the eval suite (evals/) and print the full report;
#                 fails (exit 1) when the gate fails or a metric drops below evals/baseline.json
#   make lock     re-pin requirements*.lock from pyproject.toml
#   make docs     regenerate the CLI reference and the example outputs in README.md

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip --disable-pip-version-check
RUNTIME_STAMP := $(VENV)/.runtime-installed
DEV_STAMP := $(VENV)/.dev-installed

.PHONY: review test lint typecheck unit bench eval lock docs clean

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "fluxdrive needs Python 3.11 or newer: run make PYTHON=python3.11 ...")'
	$(PYTHON) -m venv $(VENV)

$(RUNTIME_STAMP): requirements.lock pyproject.toml | $(BIN)/python
	$(PIP) install --quiet -r requirements.lock
	$(PIP) install --quiet --no-deps --no-build-isolation -e .
	@touch $@

$(DEV_STAMP): requirements-dev.lock pyproject.toml | $(BIN)/python
	$(PIP) install --quiet -r requirements-dev.lock
	$(PIP) install --quiet --no-deps --no-build-isolation -e .
	@touch $@ $(RUNTIME_STAMP)

# A review is non-interactive here: --yes approves the triage and accepts the
# expansion recommendation. FAIL_ON defaults to never so that a risky verdict is
# reported, not treated as a failed make (FAIL_ON=risky for CI); ARGS adds other
# options without dropping it (ARGS="--verbose" keeps --fail-on never).
FAIL_ON ?= never
ARGS ?=
review: $(RUNTIME_STAMP)
	@test -n "$(TARGET)" || { echo "usage: make review TARGET=<file, directory, document or diff>" >&2; exit 2; }
	$(BIN)/fluxdrive review "$(TARGET)" --yes --fail-on $(FAIL_ON) $(ARGS)

lint: $(DEV_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(DEV_STAMP)
	$(BIN)/mypy

# The browser test of the HTML report needs Debian's chromium, the Redis tests its redis-server; the script
# installs them when it can (it says why not and exits 0 otherwise, and those tests skip with the reason).
unit: $(DEV_STAMP)
	@scripts/install-debian.sh chromium:/usr/bin/chromium redis-server:/usr/bin/redis-server
	$(BIN)/pytest -n 2 --dist loadfile

test: lint typecheck unit

bench: $(DEV_STAMP)
	@for script in bench/[!_]*.py; do echo "== $$script"; $(BIN)/python $$script || exit 1; done

eval: $(DEV_STAMP)
	$(BIN)/fluxdrive eval run evals/ --fail-below evals/baseline.json

docs: $(DEV_STAMP)
	$(BIN)/python -m fluxdrive.cli.reference --write README.md
	$(BIN)/python -m fluxdrive.cli.examples --write README.md

lock: | $(BIN)/python
	$(PIP) install --quiet pip-tools
	$(BIN)/pip-compile --quiet --allow-unsafe --strip-extras --no-emit-index-url --no-emit-find-links --extra build --extra llm -o requirements.lock pyproject.toml
	$(BIN)/pip-compile --quiet --allow-unsafe --strip-extras --no-emit-index-url --no-emit-find-links --extra build --extra dev --extra llm --extra cluster -o requirements-dev.lock pyproject.toml

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache .hypothesis
