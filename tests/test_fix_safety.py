"""A fix is a promise: after `--fix --unsafe-fixes`, no file has a finding it did not have before
(spawn making inherited state pickled, an initializer reading a global the parent no longer sets),
and the result parses. Checked on every lint fixture and every probe scenario."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import libcst as cst
import pytest

from expectations import fixture_config, lint_fixtures
from tfproc_lint.engine import finding_key, lint_source
from tfproc_lint.fixing import fix_source

ROOT = Path(__file__).resolve().parent.parent
FILES = [p for p in lint_fixtures(ROOT) if p.name.startswith("bad_")] + sorted(
    (ROOT / "runtime_probe" / "scenarios").glob("*_bad.py"))


def _keys(diagnostics) -> Counter:
    return Counter(finding_key(d) for d in diagnostics)


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_fixing_adds_no_finding(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    config = fixture_config(source, path.name)
    before = lint_source(source, str(path), config)
    outcome = fix_source(source, str(path), config, unsafe=True)
    if outcome.source == source:
        return
    cst.parse_module(outcome.source)
    after = lint_source(outcome.source, str(path), config)
    added = _keys(after) - _keys(before)
    assert not added, added
    assert len(after) < len(before)


# That `check` lists exactly the fixes `--fix` applies is tests/test_fix_promises.py's job.
