"""Positions of nodes, as LibCST's PositionProvider gives them, about four times cheaper.

PositionProvider tracks positions in a code generation pass through a context manager and two
dataclass objects per node, which costs more than parsing. This tracker runs the same pass
(LibCST's own `_codegen` with a subclass of its position-tracking state) but records plain
tuples. tests/test_positions.py checks it against PositionProvider node by node.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import CodePosition, CodeRange
from libcst.metadata.position_provider import PositionProvidingCodegenState

Span = tuple[tuple[int, int], tuple[int, int]]


class _Syntactic:
    """The `with state.record_syntactic_position(node)` block of one node."""

    __slots__ = ("state", "node", "start_node", "end_node", "start")

    def __init__(self, state, node, start_node, end_node) -> None:
        self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node

    def __enter__(self) -> None:
        self.start = (self.state.line, self.state.column)

    def __exit__(self, *exc_info) -> bool:
        spans = self.state.spans
        start = spans[self.start_node][0] if self.start_node is not None else self.start
        end = spans[self.end_node][1] if self.end_node is not None else (self.state.line, self.state.column)
        spans[self.node] = (start, end)
        return False


class _Tracker(PositionProvidingCodegenState):
    spans: dict
    stack: list

    def before_codegen(self, node: cst.CSTNode) -> None:
        self.stack.append((self.line, self.column))

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self.stack.pop()
        if node not in self.spans:  # nodes without a syntactic position: whitespace-inclusive
            self.spans[node] = (start, (self.line, self.column))

    def record_syntactic_position(self, node, *, start_node=None, end_node=None):
        return _Syntactic(self, node, start_node, end_node)


def compute_spans(module: cst.Module) -> dict[cst.CSTNode, Span]:
    state = _Tracker(default_indent=module.default_indent, default_newline=module.default_newline, provider=None)
    state.spans, state.stack = {}, []
    module._codegen(state)
    return state.spans


def as_range(span: Span) -> CodeRange:
    (start_line, start_column), (end_line, end_column) = span
    return CodeRange(CodePosition(start_line, start_column), CodePosition(end_line, end_column))
