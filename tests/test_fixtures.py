"""Every lint fixture through the core function: exactly the expected (line, code) pairs, or
(cell, line, code) for a notebook. Expectations of opt-in rules (TFP302, TFP303) hold only when
they are selected. Each fixture is linted once, with the opt-in rules selected
(tests/fixture_findings.py); its findings as configured are those of the rules its configuration
enables."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from expectations import expected_in, lint_fixtures
from fixture_findings import configured, enabled_codes, findings, findings_as_configured, selected
from tfproc_lint.rules.base import all_rules

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = lint_fixtures(ROOT)
IDS = [str(p.relative_to(ROOT / "fixtures" / "lint")) for p in FIXTURES]
OPT_IN = {rule.code for rule in all_rules() if not rule.default_enabled}


@pytest.mark.parametrize("path", FIXTURES, ids=IDS)
def test_fixture(path: Path) -> None:
    """As configured (by default: opt-in rules off), every expectation but the opt-in rules'."""
    assert {f.where for f in findings_as_configured(path)} == {e for e in expected_in(path) if e[-1] not in OPT_IN}


@pytest.mark.parametrize("path", FIXTURES, ids=IDS)
def test_fixture_with_the_opt_in_rules_selected(path: Path) -> None:
    """With `extend-select TFP3`, every expectation: TFP302 and TFP303 only where a fixture expects them."""
    assert {f.where for f in findings(path)} == expected_in(path)


def test_selecting_the_opt_in_rules_only_adds_them() -> None:
    """What lets test_fixture read the findings as configured from one lint with the opt-in rules
    selected: on every fixture, the selection adds the opt-in rules and removes none."""
    for path in FIXTURES:
        as_configured, with_opt_in = enabled_codes(configured(path), path), enabled_codes(selected(path), path)
        assert as_configured <= with_opt_in and with_opt_in - as_configured <= OPT_IN, path
        assert OPT_IN <= with_opt_in, path


def test_bad_fixtures_expect_findings_and_good_ones_none() -> None:
    """A good fixture expects nothing from the default rules; it may expect an opt-in rule's cost
    finding (a row-at-a-time task in a fixture written for another rule)."""
    for path in FIXTURES:
        if path.name.startswith("bad_"):
            assert expected_in(path), f"{path} is a bad fixture without an expect comment"
        elif path.name.startswith("good_"):
            unexpected = {e for e in expected_in(path) if e[-1] not in OPT_IN}
            assert not unexpected, f"{path} is a good fixture with an expect comment"
            if path.parent.name in OPT_IN:
                assert not expected_in(path), f"{path} is a good fixture of its opt-in rule with an expect comment"


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
