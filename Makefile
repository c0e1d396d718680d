# Two commands for a newcomer: `make demo` (set up, then lint the bundled example) and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: setup demo test probe benchmark docs lint clean

setup: $(VENV)/.installed

$(VENV)/.installed: setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[notebook,probe,test]'
	touch $@

# Lint the bundled example (exit 1 = findings, as expected), then show the fixes as a diff.
demo: setup
	$(BIN)/tfproc-lint check examples/; test $$? -eq 1
	$(BIN)/tfproc-lint check examples/ --diff --unsafe-fixes; test $$? -le 1

test: setup
	$(BIN)/python -m pytest

# The full probe and benchmark (about 25 minutes); README's figures come from docs/probe/.
probe: setup
	$(BIN)/tfproc-lint probe --full --output docs/probe

docs: setup
	$(BIN)/python -m tfproc_lint.docs

lint: setup
	$(BIN)/flake8 tfproc_lint runtime_probe tests
	$(BIN)/tfproc-lint check fixtures/lint/near_misses

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
