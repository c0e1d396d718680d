"""The generated rule pages are up to date, and `explain` prints the same text."""

from __future__ import annotations

import json
import sys

from runtime_probe.evidence import for_docs
from tfproc_lint.docs import PROBE_EVIDENCE, expected_pages, render_rule
from tfproc_lint.rules.base import all_rules

import processes

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
    result = processes.run([sys.executable, "-m", "tfproc_lint.cli", "explain", "tfp201"],
                           capture_output=True, text=True, check=False)
    assert result.returncode == 0
    assert result.stdout == render_rule(next(r for r in all_rules() if r.code == "TFP201"))


def test_explain_takes_a_rules_name() -> None:
    result = processes.run([sys.executable, "-m", "tfproc_lint.cli", "explain", "runtime-initialised-before-fork"],
                           capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout == render_rule(next(r for r in all_rules() if r.code == "TFP201"))


def test_explain_unknown_rule_is_a_usage_error() -> None:
    for unknown in ("TFP999", "runtime-initialized-before-fork"):
        result = processes.run([sys.executable, "-m", "tfproc_lint.cli", "explain", unknown],
                               capture_output=True, text=True, check=False)
        assert result.returncode == 2
        assert result.stderr == (f"tfproc-lint: error: unknown rule {unknown!r}: give a code or a name, e.g. TFP201 "
                                 "or runtime-initialised-before-fork; `tfproc-lint rules` lists them\n")


def test_the_evidence_the_pages_quote_is_the_committed_reports(root) -> None:
    """docs/probe/evidence.json, which the pages read, is what the probe writes for report.json."""
    report = json.loads((root / "docs" / "probe" / "report.json").read_text(encoding="utf-8"))
    assert PROBE_EVIDENCE.resolve() == root / "docs" / "probe" / "evidence.json"  # a link in the package
    assert json.loads(PROBE_EVIDENCE.read_text(encoding="utf-8")) == for_docs(report)


def test_rules_that_depend_on_an_option_document_it_under_options() -> None:
    from tfproc_lint.docs import OPTION_HELP

    for rule in all_rules():
        text = render_rule(rule)
        assert set(rule.options) <= set(OPTION_HELP), rule.code
        assert ("## Options" in text) is bool(rule.options), rule.code
        if rule.options:
            assert text.index("## Evidence") < text.index("## Options") < text.index("## References")
            assert all(f"[`{option}`]" in text for option in rule.options), rule.code


# Each option and values that differ from the defaults (fork, no GPU) in what the rules see.
OPTION_VALUES = {
    "assume-start-method": ["spawn", "forkserver"],
    "target-python": ["3.14"],
    "assume-gpu": ["true"],
}


def test_the_options_a_rule_declares_cover_what_its_examples_show() -> None:
    """Lint every inline example again under each option's other values: a rule whose findings (or
    messages) change must list the option in `Rule.options`, so that its page says so."""
    from tfproc_lint.config import Config, apply_options
    from tfproc_lint.engine import lint_source

    declared = {rule.code: set(rule.options) for rule in all_rules()}
    undeclared = set()
    for rule in all_rules():
        for example in rule.bad_examples + rule.good_examples:
            own = {key: value for key, value in example.config if key not in OPTION_VALUES}
            own["extend-select"] = "TFP3"  # the opt-in rules too

            def found(options: dict) -> set:
                config = apply_options(Config(), {**own, **options}, "test")
                diagnostics = lint_source(example.code, "example.py", config, notebook=example.notebook)
                return {(d.code, d.line, d.message) for d in diagnostics}

            base = found({})
            for option, values in OPTION_VALUES.items():
                for value in values:
                    undeclared |= {(code, option) for code, _, _ in found({option: value}) ^ base
                                   if option not in declared[code]}
    assert not undeclared, "findings change with these options; add them to the rules' `options`"


def test_the_option_tables_of_the_configuration_page_are_rendered_from_the_option_table(root) -> None:
    """docs/configuration.md's Options and flake8 tables are tfproc_lint/options.py's (`python -m tfproc_lint.docs`):
    a row taken out comes back."""
    from tfproc_lint.docs import render_configuration

    text = (root / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert render_configuration(text) == text, "docs/configuration.md is stale: run `python -m tfproc_lint.docs`"
    for row in ("| `src` | (files only) |", "| `--tfp-assume-gpu` |"):
        start = text.index(row)
        assert render_configuration(text[:start] + text[text.index("\n", start) + 1:]) == text


def test_the_configuration_page_names_every_flag_of_check(root) -> None:
    """A flag of `check` that is no setting is listed under "Options only on the command line"."""
    from tfproc_lint.options import CHECK_OPTIONS

    text = (root / "docs" / "configuration.md").read_text(encoding="utf-8")
    only_flags = text[text.index("### Options only on the command line"):text.index("### Project analysis")]
    missing = [option.command_line[-1] for option in CHECK_OPTIONS if option.value is None
               and not any(f"`{flag}" in only_flags for flag in option.command_line)]
    assert not missing, missing
