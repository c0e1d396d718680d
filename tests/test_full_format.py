"""`--output-format full` and related locations, over every rule's bad examples: each finding gets
its source line with `^` under exactly its columns, and each related place (today TFP201's "runtime
started here" and TFP204's "defined here") its own snippet and label; JSON `related` and SARIF
`relatedLocations` carry the same places. Written over all rules, so a rule that starts setting
`related` is covered without a new test."""

from __future__ import annotations

import json
import re

import nbformat
import pytest

import processes
from conftest import run_env, tool
from notebooks import notebook
from test_formats import validate
from tfproc_lint.config import Config, apply_options
from tfproc_lint.diagnostics import FileResult
from tfproc_lint.engine import lint_notebook, lint_source
from tfproc_lint.notebook import read_notebook
from tfproc_lint.output import Run, full, json_format, sarif
from tfproc_lint.rules.base import all_rules

EXAMPLES = [(rule, index, example) for rule in all_rules() for index, example in enumerate(rule.bad_examples)]
GUTTER = re.compile(r"^ *(?P<number>\d+) \| (?P<text>.*)$")
MARKER = re.compile(r"^ *\| (?P<pad> *)(?P<carets>\^+) (?P<label>.*)$")


def lint_example(example, tmp_path):
    """The example written to disk (a notebook for notebook examples) and its findings."""
    config = apply_options(Config(), dict(example.config), "example") if example.config else Config()
    if example.notebook:
        path = tmp_path / "example.ipynb"
        nbformat.write(notebook(example.code), path)
        diagnostics = lint_notebook(read_notebook(path.read_bytes()).program, str(path), config)
        cells = {number: cell.source for number, cell in enumerate(nbformat.read(path, 4).cells, start=1)}
        return path, diagnostics, lambda cell: cells[cell].splitlines()
    path = tmp_path / "example.py"
    path.write_text(example.code, encoding="utf-8")
    return path, lint_source(example.code, str(path), config), lambda cell: example.code.splitlines()


def marked(block: list[str], line_number: int, label: str) -> tuple[str, int, int]:
    """(source line, first marked column, marked width) of the marker labelled `label` under line N."""
    for index, text in enumerate(block[:-1]):
        source, marker = GUTTER.match(text), MARKER.match(block[index + 1])
        if source and marker and int(source["number"]) == line_number and marker["label"] == label:
            return source["text"], len(marker["pad"]), len(marker["carets"])
    raise AssertionError(f"no marker labelled {label!r} under line {line_number} in:\n" + "\n".join(block))


@pytest.mark.parametrize("rule,index,example", EXAMPLES, ids=[f"{r.code}-bad{i}" for r, i, _ in EXAMPLES])
def test_full_output_marks_each_finding_and_its_related_places(rule, index, example, tmp_path) -> None:
    path, diagnostics, lines_of = lint_example(example, tmp_path)
    assert diagnostics
    output = full.render(Run([FileResult(str(path), diagnostics)]))
    blocks = output.split("\n\n")
    assert blocks[-1].startswith("Found ")
    for diagnostic, block in zip(diagnostics, blocks, strict=False):
        block = block.splitlines()
        assert block[0].startswith(f"{path}:{diagnostic.location}: {diagnostic.code} ")
        source, start, width = marked(block, diagnostic.line, diagnostic.code)
        expected = lines_of(diagnostic.cell)[diagnostic.line - 1]
        assert source == expected.rstrip()
        assert start == diagnostic.col
        if diagnostic.end_line == diagnostic.line:
            assert width == diagnostic.end_col - diagnostic.col
        for related in diagnostic.related:
            cell = f"cell {related.cell}:" if related.cell is not None else ""
            assert any(line.endswith(f"::: {path}:{cell}{related.line}:{related.col + 1}") for line in block)
            source, start, width = marked(block, related.line, related.message)
            assert source == lines_of(related.cell)[related.line - 1].rstrip()
            assert start == related.col


@pytest.mark.parametrize("rule,index,example", EXAMPLES, ids=[f"{r.code}-bad{i}" for r, i, _ in EXAMPLES])
def test_json_and_sarif_carry_the_related_places(rule, index, example, tmp_path) -> None:
    path, diagnostics, _ = lint_example(example, tmp_path)
    run = Run([FileResult(str(path), diagnostics)])
    findings = json.loads(json_format.render(run))["findings"]
    document = sarif.sarif_log(run, cwd=str(tmp_path))
    validate(document)
    for diagnostic, finding, result in zip(diagnostics, findings, document["runs"][0]["results"], strict=True):
        assert finding["related"] == [r.to_dict() for r in diagnostic.related]
        related = result.get("relatedLocations", [])
        assert [(r["message"]["text"], r["physicalLocation"]["region"]["startLine"],
                 r["physicalLocation"]["region"]["startColumn"]) for r in related] == \
               [(r.message, r.line, r.col + 1) for r in diagnostic.related]
        for entry, place in zip(related, diagnostic.related):
            assert entry["physicalLocation"]["region"].get("properties", {}).get("cell") == place.cell


def test_the_rules_that_set_related_are_covered() -> None:
    """The examples exercise related places at all (TFP201 and TFP204 set them today)."""
    covered = set()
    for rule, _, example in EXAMPLES:
        config = apply_options(Config(), dict(example.config), "example") if example.config else Config()
        if any(d.related for d in lint_source(example.code, "example.py", config, notebook=example.notebook)):
            covered.add(rule.code)
    assert {"TFP201", "TFP204"} <= covered


@pytest.mark.slow
def test_full_format_through_the_command(tmp_path) -> None:
    example = next(e for r, _, e in EXAMPLES if r.code == "TFP201")
    (tmp_path / "job.py").write_text(example.code, encoding="utf-8")

    def check(*args):
        return processes.run([tool("tfproc-lint"), "check", "job.py", *args], cwd=tmp_path, env=run_env(),
                             capture_output=True, text=True, check=False, timeout=120)

    shown = check("--output-format", "full")
    assert shown.returncode == 1
    assert check("--format", "full").stdout == shown.stdout  # --format is the same option
    assert "^^^^" in shown.stdout and ":::" in shown.stdout and "TensorFlow runtime started here" in shown.stdout
    lines = shown.stdout.splitlines()
    assert lines[-1].startswith("Found 1 finding") and lines[-2] == ""
    assert check("--output-format", "full", "-q").stdout == "".join(line + "\n" for line in lines[:-2])
    github = check("--format", "github").stdout
    assert len(github.splitlines()) == 1  # related places add no annotation lines


def test_a_finding_whose_file_is_gone_is_printed_without_a_snippet(tmp_path) -> None:
    example = next(e for r, _, e in EXAMPLES if r.code == "TFP201")
    path = tmp_path / "gone.py"
    diagnostics = lint_source(example.code, str(path))
    output = full.render(Run([FileResult(str(path), diagnostics)]))
    assert output.splitlines()[0].startswith(f"{path}:")
    assert "^" not in output
