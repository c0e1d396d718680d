"""Every lint fixture through the core function: exactly the expected (line, code) pairs."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from expectations import expected, fixture_config, lint_fixtures
from tfproc_lint.engine import lint_source

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = lint_fixtures(ROOT)


@pytest.mark.parametrize("path", FIXTURES, ids=[str(p.relative_to(ROOT / "fixtures" / "lint")) for p in FIXTURES])
def test_fixture(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    config = fixture_config(source, path.name)
    found = {(d.line, d.code) for d in lint_source(source, str(path), config)}
    assert found == expected(source)


def test_bad_fixtures_expect_findings_and_good_ones_none() -> None:
    for path in FIXTURES:
        source = path.read_text(encoding="utf-8")
        if path.name.startswith("bad_"):
            assert expected(source), f"{path} is a bad fixture without an expect comment"
        elif path.name.startswith("good_"):
            assert not expected(source), f"{path} is a good fixture with an expect comment"


def test_every_rule_has_bad_good_and_near_miss_fixtures() -> None:
    from tfproc_lint.rules.base import all_rules

    codes = Counter(code for path in FIXTURES for _, code in expected(path.read_text(encoding="utf-8")))
    for rule in all_rules():
        directory = ROOT / "fixtures" / "lint" / rule.code
        assert codes[rule.code] >= 3, f"{rule.code}: fewer than 3 expected findings in fixtures"
        assert list(directory.glob("good_*.py")), f"{rule.code}: no good fixture"
    assert len(list((ROOT / "fixtures" / "lint" / "near_misses").glob("*.py"))) >= 10
