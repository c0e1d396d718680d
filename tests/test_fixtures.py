"""Every lint fixture through the core function: exactly the expected (line, code) pairs, or
(cell, line, code) for a notebook."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from expectations import expected_in, fixture_config, fixture_source, lint_fixtures
from tfproc_lint.engine import lint_notebook, lint_source
from tfproc_lint.notebook import read_notebook

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = lint_fixtures(ROOT)


@pytest.mark.parametrize("path", FIXTURES, ids=[str(p.relative_to(ROOT / "fixtures" / "lint")) for p in FIXTURES])
def test_fixture(path: Path) -> None:
    config = fixture_config(fixture_source(path), path.name)
    if path.suffix == ".ipynb":
        program = read_notebook(path.read_bytes()).program
        found = {(d.cell, d.line, d.code) for d in lint_notebook(program, str(path), config)}
    else:
        found = {(d.line, d.code) for d in lint_source(path.read_text(encoding="utf-8"), str(path), config)}
    assert found == expected_in(path)


def test_bad_fixtures_expect_findings_and_good_ones_none() -> None:
    for path in FIXTURES:
        if path.name.startswith("bad_"):
            assert expected_in(path), f"{path} is a bad fixture without an expect comment"
        elif path.name.startswith("good_"):
            assert not expected_in(path), f"{path} is a good fixture with an expect comment"


def test_notebook_fixtures_cover_the_notebook_rule_and_others() -> None:
    notebooks = [path for path in FIXTURES if path.suffix == ".ipynb"]
    codes = Counter(finding[-1] for path in notebooks for finding in expected_in(path))
    for code in ("TFP204", "TFP201", "TFP102", "TFP301"):
        assert codes[code], f"no notebook fixture expects {code}"
        assert any(p.name.startswith("good_") and p.parent.name == code for p in notebooks), code


def test_every_rule_has_bad_good_and_near_miss_fixtures() -> None:
    from tfproc_lint.rules.base import all_rules

    codes = Counter(finding[-1] for path in FIXTURES for finding in expected_in(path))
    for rule in all_rules():
        directory = ROOT / "fixtures" / "lint" / rule.code
        assert codes[rule.code] >= 3, f"{rule.code}: fewer than 3 expected findings in fixtures"
        good = list(directory.glob("good_*.py")) + list(directory.glob("good_*.ipynb"))
        assert good, f"{rule.code}: no good fixture"
    assert len(list((ROOT / "fixtures" / "lint" / "near_misses").glob("*.py"))) >= 10
