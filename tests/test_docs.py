"""The generated rule pages are up to date, and `explain` prints the same text."""

from __future__ import annotations

import json
import subprocess
import sys

from runtime_probe.evidence import for_docs
from tfproc_lint.docs import PROBE_EVIDENCE, expected_pages, render_rule
from tfproc_lint.rules.base import all_rules

HEADINGS = ["## What it does", "## Why is this bad?", "## Example", "## Use instead", "## Fix safety",
            "## Evidence", "## References"]


def test_generated_pages_are_up_to_date(root) -> None:
    for name, text in expected_pages().items():
        path = root / "docs" / "rules" / name
        assert path.exists(), f"{path} missing: run `python -m tfproc_lint.docs`"
        assert path.read_text(encoding="utf-8") == text, f"{path} is stale: run `python -m tfproc_lint.docs`"


def test_every_page_has_the_headings_in_order() -> None:
    for rule in all_rules():
        text = render_rule(rule)
        positions = [text.index(heading) for heading in HEADINGS]
        assert positions == sorted(positions), rule.code


def test_explain_prints_the_page() -> None:
    result = subprocess.run([sys.executable, "-m", "tfproc_lint.cli", "explain", "tfp201"],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0
    assert result.stdout == render_rule(next(r for r in all_rules() if r.code == "TFP201"))


def test_explain_unknown_rule_is_a_usage_error() -> None:
    result = subprocess.run([sys.executable, "-m", "tfproc_lint.cli", "explain", "TFP999"],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 2
    assert "unknown rule 'TFP999'" in result.stderr


def test_the_evidence_the_pages_quote_is_the_committed_reports(root) -> None:
    """docs/probe/evidence.json, which the pages read, is what the probe writes for report.json."""
    report = json.loads((root / "docs" / "probe" / "report.json").read_text(encoding="utf-8"))
    assert PROBE_EVIDENCE == root / "docs" / "probe" / "evidence.json"
    assert json.loads(PROBE_EVIDENCE.read_text(encoding="utf-8")) == for_docs(report)
