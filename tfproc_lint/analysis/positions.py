"""Positions of nodes, as LibCST's PositionProvider gives them, about four times cheaper.

PositionProvider tracks positions in a code generation pass through a context manager and two
dataclass objects per node, which costs more than parsing. This tracker runs the same pass
(LibCST's own `_codegen` with a subclass of its position-tracking state) but records plain
tuples. tests/test_positions.py checks it against PositionProvider node by node.
"""

from __future__ import annotations

import ast
from functools import cached_property

import libcst as cst
from libcst.metadata import CodePosition, CodeRange
from libcst.metadata.position_provider import PositionProvidingCodegenState

from tfproc_lint.analysis.walk import iter_tree

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


class Locator:
    """Positions of nodes, computed for the one statement that holds them, not the whole module.

    A code generation of the whole module costs about as much as parsing it. For a node, this
    finds the top-level statement holding it (or, inside a class, the member statement), learns
    where that statement starts from CPython's syntax tree of the same source (which the engine
    already built as a guard), and generates that statement alone, starting at its line, with
    the indentation of the blocks around it. Without a syntax tree, or where the two trees do not
    line up, the whole module is generated, as before.
    """

    def __init__(self, module: cst.Module, syntax_tree: ast.Module | None, ancestors=None) -> None:
        self.module = module
        self.syntax_tree = syntax_tree
        self.ancestors = ancestors  # node -> the nodes holding it, innermost first (the analysis's map)
        self.spans: dict[cst.CSTNode, Span] = {}
        self._whole = False

    def span(self, node: cst.CSTNode) -> Span:
        found = self.spans.get(node)
        if found is not None:
            return found
        placed = self._statement_of(node) if self.syntax_tree is not None and not self._whole else None
        if placed is None:
            self.spans = compute_spans(self.module)
            self._whole = True
        else:
            statement, line, indents = placed
            self.spans.update(statement_spans(self.module, statement, line, indents))
        return self.spans[node]

    @cached_property
    def _top_level_index(self) -> dict[int, int]:
        """id(node) -> the index of the top-level statement holding it (one walk, on first use)."""
        index = {}
        for number, statement in enumerate(self.module.body):
            for inner in iter_tree(statement):
                index[id(inner)] = number
        return index

    def _top_level_statement(self, node: cst.CSTNode) -> int | None:
        """The index of the top-level statement holding `node`: from the analysis's map of
        ancestors where it has the node (it skips whitespace and punctuation), else one walk."""
        above = self.ancestors(node) if self.ancestors is not None else None
        if above and above[-1] is self.module:
            statement = above[-2] if len(above) > 1 else node
            return next((number for number, s in enumerate(self.module.body) if s is statement), None)
        return self._top_level_index.get(id(node))

    def _statement_of(self, node: cst.CSTNode):
        """(statement, the line its code generation starts on, enclosing indents), or None."""
        body, syntax_body, indents = self.module.body, self.syntax_tree.body, []
        top = self._top_level_statement(node)
        if top is None:
            return None
        while True:
            pairs = _paired(body, syntax_body)
            if pairs is None:
                return None
            for number, (statement, syntax_node) in enumerate(pairs):
                if body is self.module.body and number != top:
                    continue
                if statement is not node and not _holds(statement, node):
                    continue
                member_block = statement.body if isinstance(statement, cst.ClassDef) else None
                if isinstance(member_block, cst.IndentedBlock) and any(
                        _holds(member, node) or member is node for member in member_block.body):
                    body, syntax_body = member_block.body, syntax_node.body
                    indents = [*indents, member_block.indent or self.module.default_indent]
                    break
                return statement, _first_line(statement, syntax_node), indents
            else:
                return None


def statement_spans(module: cst.Module, statement: cst.CSTNode, line: int, indents: list[str]) -> dict:
    state = _Tracker(default_indent=module.default_indent, default_newline=module.default_newline, provider=None)
    state.spans, state.stack = {}, []
    state.line, state.column = line, 0
    state.indent_tokens = list(indents)
    statement._codegen(state)
    return state.spans


def _paired(body, syntax_body) -> list | None:
    """LibCST statements with the first CPython statement of each (`a; b` is one LibCST line and
    two CPython statements), or None when they do not line up."""
    pairs, index = [], 0
    for statement in body:
        count = len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1
        if index + count > len(syntax_body):
            return None
        pairs.append((statement, syntax_body[index]))
        index += count
    return pairs if index == len(syntax_body) else None


def _first_line(statement: cst.CSTNode, syntax_node: ast.stmt) -> int:
    """The line the statement's code generation starts on: its leading blank and comment lines
    come before its first token (the first decorator's line for a decorated definition)."""
    line = syntax_node.lineno - len(statement.leading_lines)
    decorators = getattr(statement, "decorators", ())
    if decorators:
        line = syntax_node.decorator_list[0].lineno - len(statement.leading_lines) - len(decorators[0].leading_lines)
    return line


def _holds(root: cst.CSTNode, node: cst.CSTNode) -> bool:
    """`node` is inside `root` (positions are asked for code nodes, never for whitespace)."""
    return any(inner is node for inner in iter_tree(root))
