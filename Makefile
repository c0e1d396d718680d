# Two commands for a newcomer: `make demo` (install the linter, lint the bundled example) and
# `make test` (install the probe and test extras too, run the suite). A contributor's loop:
# `make test-rule RULE=TFP201` (a rule's own tests), `make test-fast` (no TensorFlow, nothing slow),
# then `make test` before a pull request.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip --disable-pip-version-check
# The fast suite's own environment: the linter and the test tools, no TensorFlow; it never touches $(VENV).
FAST_VENV ?= .venv-fast
FAST_BIN := $(FAST_VENV)/bin
# Tests that need none of TensorFlow, a Jupyter kernel, pre-commit's hook environments or the probe,
# and are not slow (subprocesses, proofs over whole corpora; markers: setup.cfg).
FAST_TESTS := not tensorflow and not kernel and not precommit and not probe and not slow
# A rule's own tests: its contract and examples, lint fixtures and their messages, fix fixtures, fix contract.
RULE_TESTS := tests/test_rules.py tests/test_fixtures.py tests/test_fixture_messages.py tests/test_fixing.py \
	tests/test_fix_contract.py

.PHONY: setup dev demo test test-fast test-rule probe benchmark docs lint clean

# Everything: the linter, the runtime probe (TensorFlow) and the test tools (about 2.8 GB, measured with du -sh .venv).
# `make test` runs in about 14 minutes on 2 cores, about 16 with this install (README, Quick start).
setup: $(VENV)/.all-installed
dev: setup

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# The linter alone (libcst, flake8, packaging): seconds on a fresh clone.
$(VENV)/.linter-installed: setup.cfg pyproject.toml | $(BIN)/python
	$(PIP) install --quiet -e .
	touch $@

$(VENV)/.all-installed: setup.cfg pyproject.toml | $(BIN)/python
	$(PIP) install --quiet -e '.[notebook,probe,test,engines]'
	touch $(VENV)/.linter-installed $@

# Lint the bundled example (exit 1 = findings, as expected), then show the fixes as a diff.
demo: $(VENV)/.linter-installed
	$(BIN)/tfproc-lint check examples/; test $$? -eq 1
	$(BIN)/tfproc-lint check examples/ --diff --unsafe-fixes; test $$? -le 1

test: setup
	$(BIN)/python -m pytest

$(FAST_BIN)/python:
	$(PYTHON) -m venv $(FAST_VENV)

$(FAST_VENV)/.installed: setup.cfg pyproject.toml | $(FAST_BIN)/python
	$(FAST_BIN)/python -m pip --disable-pip-version-check install --quiet -e '.[test]'
	touch $@

# Every test that needs no TensorFlow, kernel or pre-commit and is not slow, in .venv-fast (markers:
# setup.cfg), on every core (pytest-xdist); -rs lists what was skipped and why.
test-fast: $(FAST_VENV)/.installed
	$(FAST_BIN)/python -m pytest -q -rs -n auto -m "$(FAST_TESTS)"

# One rule's loop, e.g. `make test-rule RULE=TFP201`: the tests of RULE_TESTS whose name or fixture names it.
test-rule: $(FAST_VENV)/.installed
	@test -n "$(RULE)" || { echo "usage: make test-rule RULE=TFP201"; exit 2; }
	$(FAST_BIN)/python -m pytest -q -m "$(FAST_TESTS)" -k "$(RULE)" $(RULE_TESTS)

# The full probe and benchmark (about 40 minutes on 2 cores); README's figures come from docs/probe/.
probe: setup
	$(BIN)/tfproc-lint probe --full --output docs/probe

docs: setup
	$(BIN)/python -m tfproc_lint.docs

lint: $(VENV)/.linter-installed
	$(BIN)/flake8 tfproc_lint runtime_probe tests
	$(BIN)/tfproc-lint check fixtures/lint/near_misses --extend-select TFP3

clean:
	rm -rf $(VENV) $(FAST_VENV) build *.egg-info .pytest_cache
