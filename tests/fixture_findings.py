"""Each lint fixture linted once per test session, with the opt-in rules selected, and shared by the
tests that read its findings: tests/test_fixtures.py (positions, as configured and with the opt-in
rules) and tests/test_fixture_messages.py (the messages' snapshot).

The fixture's findings as configured are these less the codes its configuration does not enable:
selecting more rules adds their checks and changes no other rule's findings (each rule reports on
its own; test_fixtures.py checks that the configured rules are a subset of the selected ones)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

from expectations import fixture_config, fixture_source
from tfproc_lint.config import Config, apply_options
from tfproc_lint.engine import enabled_rules, lint_notebook, lint_source
from tfproc_lint.notebook import read_notebook

# TFP302's message counts this machine's CPUs; the fixtures are linted as on a machine with this many,
# so that the snapshot of messages is the same on every machine.
SNAPSHOT_CPUS = 8


@dataclass(frozen=True)
class Finding:
    """One finding of a fixture: `cell` is None in a Python file (see expectations.py)."""

    cell: int | None
    line: int
    column: int
    code: str
    message: str

    @property
    def where(self) -> tuple:
        """(line, code), or (cell, line, code) in a notebook: what an `# expect:` comment states."""
        return (self.line, self.code) if self.cell is None else (self.cell, self.line, self.code)


def configured(path: Path) -> Config:
    """The fixture's own configuration (`# fixture-config:`; by default the opt-in rules are off)."""
    return fixture_config(fixture_source(path), path.name)


def selected(path: Path) -> Config:
    """The fixture's configuration with the opt-in rules selected (`extend-select TFP3`)."""
    return apply_options(configured(path), {"extend-select": "TFP3"}, "test")


def enabled_codes(config: Config, path: Path) -> frozenset[str]:
    return frozenset(rule.code for rule in enabled_rules(config.for_path(str(path))))


@functools.cache
def findings(path: Path) -> tuple[Finding, ...]:
    """The fixture's findings with the opt-in rules selected, linted once per session."""
    config = selected(path)
    with mock.patch("os.cpu_count", return_value=SNAPSHOT_CPUS):
        if path.suffix == ".ipynb":
            program = read_notebook(path.read_bytes()).program
            diagnostics = lint_notebook(program, str(path), config)
        else:
            diagnostics = lint_source(path.read_text(encoding="utf-8"), str(path), config)
    return tuple(Finding(d.cell, d.line, d.col, d.code, d.message) for d in diagnostics)


def findings_as_configured(path: Path) -> tuple[Finding, ...]:
    codes = enabled_codes(configured(path), path)
    return tuple(finding for finding in findings(path) if finding.code in codes)
