"""analysis/positions.py must give exactly what LibCST's PositionProvider gives."""

from __future__ import annotations

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from expectations import lint_fixtures
from tfproc_lint.analysis.positions import as_range, compute_spans


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
