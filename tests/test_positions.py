"""analysis/positions.py must give exactly what LibCST's PositionProvider gives."""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from expectations import lint_fixtures
from tfproc_lint.analysis.positions import as_range, compute_spans


@pytest.mark.slow
def test_spans_equal_position_provider_on_every_node_of_every_fixture(root) -> None:
    files = lint_fixtures(root) + sorted((root / "tfproc_lint").rglob("*.py"))
    for path in files:
        module = cst.parse_module(path.read_text(encoding="utf-8"))
        expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        spans = compute_spans(module)
        mismatched = [node for node, code_range in expected.items() if as_range(spans[node]) != code_range]
        assert not mismatched, f"{path}: {len(mismatched)} nodes differ, e.g. {type(mismatched[0]).__name__}"


def test_crlf_and_tabs() -> None:
    module = cst.parse_module("if x:\r\n\tf(a,\r\n\t  b)\r\n")
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    spans = compute_spans(module)
    assert all(as_range(spans[node]) == code_range for node, code_range in expected.items())


def _files(root):
    return lint_fixtures(root) + sorted((root / "tfproc_lint").rglob("*.py")) + sorted(
        (root / "runtime_probe").rglob("*.py")) + sorted((root / "tests").rglob("*.py"))


@pytest.mark.slow
def test_statement_local_spans_equal_whole_module_spans(root) -> None:
    """The Locator generates only the statement holding a node; every node of every statement
    (class members included) must get the span a whole-module generation gives."""
    import ast

    from tfproc_lint.analysis.positions import Locator
    from tfproc_lint.analysis.walk import iter_tree

    for path in _files(root):
        source = path.read_text(encoding="utf-8")
        if path.suffix != ".py":
            continue
        module = cst.parse_module(source)
        expected = compute_spans(module)
        locator = Locator(module, ast.parse(source))
        for node in iter_tree(module):
            if node is module:
                continue
            assert locator.span(node) == expected[node], (path, type(node).__name__, expected[node])
        assert not locator._whole, f"{path}: fell back to a whole-module generation"


@pytest.mark.slow
def test_statement_local_spans_with_the_analysis_map_of_ancestors(root) -> None:
    """As above, with the analysis's map of ancestors finding each node's statement (what the
    engine does), on the lint fixtures."""
    import ast

    from tfproc_lint.analysis.positions import Locator
    from tfproc_lint.analysis.walk import iter_tree

    for path in lint_fixtures(root):
        if path.suffix != ".py":
            continue
        source = path.read_text(encoding="utf-8")
        module = cst.parse_module(source)
        expected = compute_spans(module)
        locator = Locator(module, ast.parse(source), _ancestors(module))
        for node in iter_tree(module):
            if node is not module:
                assert locator.span(node) == expected[node], (path, type(node).__name__, expected[node])
        assert not locator._whole, f"{path}: fell back to a whole-module generation"


def _ancestors(module: cst.Module):
    from tfproc_lint.analysis.module_facts import ModuleFacts

    facts = ModuleFacts.__new__(ModuleFacts)  # only the tree: ancestors() needs nothing else
    facts.module = module
    return facts.ancestors


def test_statement_local_spans_with_decorators_comments_semicolons_and_crlf() -> None:
    import ast

    from tfproc_lint.analysis.positions import Locator
    from tfproc_lint.analysis.walk import iter_tree

    source = ("# header\n\nimport os; import sys\n\n\n# about f\n@dec(1)\n# between\n@dec2\ndef f(a,\n      b):\n"
              "    return a  # tail\n\nclass C(Base):\n    # member comment\n\n    @staticmethod\n"
              "    def g():\n        if x:\r\n            y = (1,\n                 2)\n    z = 3\n")
    module = cst.parse_module(source)
    expected = compute_spans(module)
    for locator in (Locator(module, ast.parse(source)), Locator(module, ast.parse(source), _ancestors(module))):
        for node in iter_tree(module):
            if node is not module:
                assert locator.span(node) == expected[node], type(node).__name__
