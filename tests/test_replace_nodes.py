"""replace_nodes enters only the nodes on the way to a replaced one; it prints what LibCST's full
transformer walk prints (which rebuilds every node), whatever is replaced and however deep."""

from __future__ import annotations

import libcst as cst
import pytest

from tfproc_lint.fixes.common import replace_nodes

SOURCE = '''\
import os  # first


def work(x, y=1):
    """Doc."""
    total = [x + y, (x * 2), os.getpid()]
    if total:
        return total
    return None


class Box:
    value = work(1, y=2)
'''


class _FullWalk(cst.CSTTransformer):
    def __init__(self, mapping) -> None:
        super().__init__()
        self.mapping = mapping

    def on_leave(self, original_node, updated_node):
        replacement = self.mapping.get(original_node)
        if replacement is None:
            return updated_node
        return replacement(updated_node) if callable(replacement) else replacement


def _nodes(module: cst.Module, kind: type) -> list:
    found = []

    class Collect(cst.CSTVisitor):
        def on_visit(self, node) -> bool:
            if isinstance(node, kind):
                found.append(node)
            return True

    module.visit(Collect())
    return found


def _mappings(module: cst.Module):
    names = _nodes(module, cst.Name)
    yield {names[3]: cst.Name("renamed")}
    yield {n: cst.Name(n.value.upper()) for n in names}  # nested targets: every name
    function = _nodes(module, cst.FunctionDef)[0]
    yield {function: lambda updated: updated.with_changes(name=cst.Name("job")), names[5]: cst.Name("z")}
    yield {_nodes(module, cst.Comma)[0]: cst.Comma(whitespace_after=cst.SimpleWhitespace("   "))}
    yield {_nodes(module, cst.EmptyLine)[0]: cst.EmptyLine(comment=cst.Comment("# added"))}
    statements = _nodes(module, cst.SimpleStatementLine)
    yield {statements[1]: cst.RemovalSentinel.REMOVE}
    yield {statements[0]: cst.FlattenSentinel([cst.parse_statement("import sys\n"), statements[0]])}
    yield {module: lambda updated: updated.with_changes(body=[*updated.body, cst.parse_statement("x = 1\n")]),
           _nodes(module, cst.Integer)[0]: cst.Integer("7")}
    yield {cst.Name("elsewhere"): cst.Name("never")}  # a node of no tree: nothing changes


@pytest.mark.parametrize("with_ancestors", [False, True])
@pytest.mark.parametrize("number", range(9))
def test_replace_nodes_prints_what_the_full_walk_prints(number: int, with_ancestors: bool) -> None:
    """With the analysis's map of ancestors (which skips whitespace and punctuation: a comma or an
    empty line is then found by the walk), as without."""
    module = cst.parse_module(SOURCE)
    mapping = list(_mappings(module))[number]
    expected = module.visit(_FullWalk(mapping)).code
    assert replace_nodes(module, mapping, _ancestors(module) if with_ancestors else None).code == expected
    assert (expected != SOURCE) is (number != 8)


def _ancestors(module: cst.Module):
    from tfproc_lint.analysis.module_facts import ModuleFacts

    facts = ModuleFacts.__new__(ModuleFacts)  # only the tree: ancestors() needs nothing else
    facts.module = module
    return facts.ancestors
