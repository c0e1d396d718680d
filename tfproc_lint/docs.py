"""Rule documentation rendered from the rule classes (one page per rule, Ruff's headings), and the
option tables of docs/configuration.md from the option table (tfproc_lint/options.py).

`python -m tfproc_lint.docs` rewrites docs/rules/ and those tables; `--check` fails when one is out of date.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import textwrap
from pathlib import Path

from tfproc_lint.options import FLAKE8_OPTIONS, SETTINGS, ValueKind
from tfproc_lint.rules.base import FixAvailability, Rule, all_rules

DOCS_DIR = Path(__file__).resolve().parent.parent / "docs" / "rules"
# What the last full probe run observed, per rule: data the probe writes next to its report.json
# (runtime_probe/evidence.py, docs/probe/evidence.json); the linter never imports the probe. In the
# repository this is a link to that file, in the wheel a copy (package data), so that `explain`
# prints the Evidence table the repository's pages show.
PROBE_EVIDENCE = Path(__file__).resolve().with_name("probe_evidence.json")
FIX_AVAILABILITY = {
    FixAvailability.NONE: "No automatic fix.",
    FixAvailability.SOMETIMES: "Fix is sometimes available.",
    FixAvailability.ALWAYS: "Fix is always available.",
}


# What each option a rule depends on (`Rule.options`) does, for the rule pages' Options section.
_START_METHOD_LINK = "../configuration.md#the-start-method-target-python-and-assume-start-method"
OPTION_HELP = {
    "assume-start-method": (
        f"[`assume-start-method`]({_START_METHOD_LINK}): the start method of the pools and processes "
        "whose code does not choose one (`get_context(...)`, `mp_context=`, `set_start_method(...)` in "
        "the file); what the rule reports depends on it, and a message that rests on it says so."),
    "target-python": (
        f"[`target-python`]({_START_METHOD_LINK}): without `assume-start-method`, the start method is "
        "that Python's default on Linux, fork before 3.14 and forkserver from 3.14; by default the "
        "project's `requires-python`."),
    "assume-gpu": (
        "[`assume-gpu`](../configuration.md#gpus-assume-gpu): the code runs where TensorFlow sees GPUs, "
        "so the rule reports without GPU use in the file itself; on when the project depends on a GPU "
        "build of TensorFlow."),
}


def _paragraph(text: str) -> str:
    return textwrap.fill(text, width=100, break_long_words=False, break_on_hyphens=False)


def render_rule(rule: type[Rule]) -> str:
    bad, good = rule.bad_examples[0], rule.good_examples[0]
    header = f"{rule.summary}. Severity: {rule.severity.value}. {FIX_AVAILABILITY[rule.fix_availability]}"
    if not rule.default_enabled:
        header += f" {opt_in_note(rule.code)}"
    sections = [
        f"# {rule.code} {rule.name}",
        header,
        "## What it does",
        _paragraph(rule.what_it_does),
        "## Why is this bad?",
        _paragraph(rule.why_bad),
    ]
    if rule.known_problems:
        sections += ["## Known problems", _paragraph(rule.known_problems)]
    sections += [
        "## Example",
        f"```python\n{bad.code.rstrip()}\n```",
        "## Use instead",
        f"```python\n{good.code.rstrip()}\n```",
    ]
    if rule.engines:
        sections += ["## Ray, Dask and Spark", _paragraph(rule.engines)]
        sections += [f"```python\n{example.code.rstrip()}\n```" for example in engine_examples(rule)]
    sections += [
        "## Fix safety",
        _paragraph(rule.fix_safety),
        "## Evidence",
        _paragraph(rule.evidence) + observed(rule.code),
    ]
    if rule.options:
        sections += ["## Options", "\n".join(
            textwrap.fill(OPTION_HELP[option], width=100, initial_indent="- ", subsequent_indent="  ",
                          break_long_words=False, break_on_hyphens=False) for option in rule.options)]
    sections += [
        "## References",
        "\n".join(f"- {reference}" for reference in rule.references),
    ]
    return "\n\n".join(sections) + "\n"


_ENGINE_IMPORT = re.compile(r"^(?:import|from) (?:ray|dask|distributed|pyspark)\b", re.MULTILINE)


def engine_examples(rule: type[Rule]) -> list:
    """The rule's bad examples written for a distributed engine (they import one)."""
    return [example for example in rule.bad_examples if _ENGINE_IMPORT.search(example.code)]


def opt_in_note(code: str) -> str:
    return (f"**Opt-in**: off by default; enable it with `--extend-select {code}` (or `{code[:4]}`), "
            f"`extend-select = [\"{code}\"]` in `[tool.tfproc-lint]`, or `flake8 --extend-select {code}`; "
            "`--select TFP` does not turn it on.")


def observed(code: str, evidence: Path = PROBE_EVIDENCE) -> str:
    """What the runtime probe observed for this rule, from the committed full report's evidence."""
    if not evidence.exists():
        return ""
    info = json.loads(evidence.read_text(encoding="utf-8")).get(code)
    if not info:
        return ""
    lines = [
        "",
        "",
        f"Observed by `tfproc-lint probe` ({info['observed_on']}; full report: docs/probe/report.md): "
        f"**{info['status']}**.",
        "",
        "| scenario | expected | observed | verdict |",
        "| --- | --- | --- | --- |",
    ]
    for row in info["rows"]:
        seen = re.sub(r" at 0x[0-9a-f]+", "", row["observed"])  # object addresses change every run
        seen = seen if len(seen) <= 110 else seen[:107] + "..."
        cells = [row["name"], row["expected"], seen, row["verdict"]]
        lines.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
    return "\n".join(lines)


def render_index() -> str:
    lines = ["# Rules", "", "| Code | Name | Summary | Fix |", "| --- | --- | --- | --- |"]
    for rule in all_rules():
        summary = rule.summary if rule.default_enabled else f"**opt-in**: {rule.summary}"
        lines.append(f"| [{rule.code}]({rule.code}.md) | {rule.name} | {summary} | {rule.fix_availability.value} |")
    lines += ["", "Opt-in rules run only when selected by a code more specific than `TFP` "
              "(`--extend-select TFP3`); see [configuration](../configuration.md#opt-in-rules)."]
    return "\n".join(lines) + "\n"


def expected_pages() -> dict[str, str]:
    pages = {f"{rule.code}.md": render_rule(rule) for rule in all_rules()}
    pages["README.md"] = render_index()
    return pages


def render_settings_table() -> str:
    """docs/configuration.md's Options table: each setting, its flag (with an example value), default and use."""
    rows = ["| Option | Command line | Default | What it does |", "| --- | --- | --- | --- |"]
    for option in SETTINGS.values():
        flag = " ".join(part for part in (*option.command_line[:1], option.doc.example) if part)
        rows.append(f"| `{option.name}` | {f'`{flag}`' if option.command_line else '(files only)'} | "
                    f"{option.doc.default} | {option.doc.text} |")
    return "\n".join(rows) + "\n"


def render_flake8_table() -> str:
    """docs/configuration.md's table of the flake8 plugin's `--tfp-` options."""
    rows = ["| flake8 option | flake8 config key | Same as |", "| --- | --- | --- |"]
    for option in FLAKE8_OPTIONS:
        boolean = option.value is ValueKind.BOOLEAN  # a flag; `true` in the config file
        rows.append(f"| `--tfp-{option.name}{'' if boolean else ' ' + option.doc.example}` | "
                    f"`tfp-{option.name} = {'true' if boolean else option.doc.example}` | `{option.name}` |")
    return "\n".join(rows) + "\n"


CONFIGURATION_PAGE = "configuration.md"  # beside docs/rules/
# The tables between `<!-- generated: NAME ... -->` and `<!-- end generated: NAME -->` in it.
GENERATED_TABLES = {"options": render_settings_table, "flake8-options": render_flake8_table}


def render_configuration(text: str) -> str:
    """docs/configuration.md's text with its generated tables rendered again."""
    for name, render in GENERATED_TABLES.items():
        marked = re.compile(rf"(<!-- generated: {name} .*?-->\n).*?(<!-- end generated: {name} -->)", re.DOTALL)
        text, found = marked.subn(lambda match: match.group(1) + render() + match.group(2), text)
        if found != 1:
            raise ValueError(f"{CONFIGURATION_PAGE}: expected one generated {name} table, found {found}")
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tfproc_lint.docs", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="fail if docs/rules/ or configuration.md's option tables are out of date")
    parser.add_argument("--output", type=Path, default=DOCS_DIR)
    args = parser.parse_args(argv)
    stale = []
    for name, text in expected_pages().items():
        path = args.output / name
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current != text:
            stale.append(name)
            if not args.check:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
    configuration = args.output.parent / CONFIGURATION_PAGE
    if configuration.exists():
        current = configuration.read_text(encoding="utf-8")
        if render_configuration(current) != current:
            stale.append(CONFIGURATION_PAGE)
            if not args.check:
                configuration.write_text(render_configuration(current), encoding="utf-8")
    if args.check and stale:
        print(f"out of date: {', '.join(stale)}; run `python -m tfproc_lint.docs`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
