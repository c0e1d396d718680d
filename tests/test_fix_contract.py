"""A fix is a promise (issue 18), checked on every bad lint fixture, every fix fixture's input and
every probe scenario that goes wrong, each planned and fixed once at each level:

- `check` lists exactly the fixes `--fix` applies, safe and unsafe, with the same counts;
- every finding is either fixed or still there, and nothing is left to fix after a run (so a
  second run changes nothing);
- the result parses, and linted afresh it has no finding the file did not have (spawn making
  inherited state pickled, an initializer reading a global the parent no longer sets), fewer
  findings than before, and exactly the findings the fix run reports as remaining.

Through the public functions only (plan_source, fix_source, lint_source), so that it holds however
the engine verifies fixes. Cases of one rewrite or one round: tests/test_fix_promises.py; the fix
fixtures' expected rewrites and the written files: tests/test_fixing.py."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import libcst as cst
import pytest

from expectations import fixture_config, lint_fixtures
from tfproc_lint.diagnostics import Applicability
from tfproc_lint.engine import lint_source
from tfproc_lint.fixing import fix_source, plan_source

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted([p for p in lint_fixtures(ROOT) if p.suffix == ".py" and p.name.startswith("bad_")]
               + sorted((ROOT / "fixtures" / "fix").rglob("*.in.py"))
               + sorted((ROOT / "runtime_probe" / "scenarios").glob("*_bad.py")))

# A finding as compared across a rewrite, which may move lines and change quoted code.
_LINE_OR_CODE = re.compile(r"lines? \d+(?:, \d+)*|`[^`]*`")


def _keys(diagnostics) -> Counter:
    return Counter((d.code, _LINE_OR_CODE.sub("_", d.message)) for d in diagnostics)


def _counts(listed) -> tuple[int, int]:
    """(safe fixes, all fixes) among the findings."""
    safe = sum(1 for d in listed if d.fix and d.fix.applicability is Applicability.SAFE)
    return safe, sum(1 for d in listed if d.fix)


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_fixes_keep_their_promises(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    config = fixture_config(source, path.name)
    listed = plan_source(source, str(path), config)
    safe, total = _counts(listed)
    for unsafe, promised in ((False, safe), (True, total)):
        outcome = fix_source(source, str(path), config, unsafe=unsafe)
        assert len(outcome.applied) == promised
        # every finding is either fixed or still there: nothing disappears unfixed
        assert len(listed) == len(outcome.applied) + len(outcome.remaining)
        # after --fix, what is left to fix is what --unsafe-fixes adds; after both, nothing
        assert _counts(outcome.remaining) == ((0, total - safe) if not unsafe else (0, 0))
        if outcome.source == source:
            continue
        cst.parse_module(outcome.source)
        after = lint_source(outcome.source, str(path), config)
        added = _keys(after) - _keys(listed)
        assert not added, added
        assert len(after) < len(listed)
        assert _keys(after) == _keys(outcome.remaining)
