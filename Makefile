# Two commands for a newcomer: `make demo` (install the linter, lint the bundled example) and
# `make test` (install the probe and test extras too, run the suite).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip --disable-pip-version-check

.PHONY: setup demo test probe benchmark docs lint clean

# Everything: the linter, the runtime probe (TensorFlow) and the test tools (about 1.7 GB).
setup: $(VENV)/.all-installed

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

# The full probe and benchmark (about 40 minutes on 2 cores); README's figures come from docs/probe/.
probe: setup
	$(BIN)/tfproc-lint probe --full --output docs/probe

docs: setup
	$(BIN)/python -m tfproc_lint.docs

lint: $(VENV)/.linter-installed
	$(BIN)/flake8 tfproc_lint runtime_probe tests
	$(BIN)/tfproc-lint check fixtures/lint/near_misses --extend-select TFP3

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
