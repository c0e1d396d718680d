"""Fast read-only traversal of LibCST trees.

`CSTNode.visit` rebuilds every node it passes (it serves transformers too), which costs about half
a parse; reading the dataclass fields directly costs about a tenth. Whitespace, comments and
punctuation fields are skipped: no rule reads them.
"""

from __future__ import annotations

import dataclasses
from typing import Iterator

import libcst as cst

_SKIPPED_FIELDS = frozenset({
    "lpar", "rpar", "comma", "semicolon", "lbracket", "rbracket", "lbrace", "rbrace", "leading_lines",
    "lines_after_decorators", "header", "footer", "trailing_whitespace", "colon", "equal", "dot",
    "operator", "whitespace_after_at", "star_tok", "asynchronous", "first_line", "newline",
})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}

# Nodes whose bodies run later (or elsewhere), not where they stand.
SCOPE_NODES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def _fields(kind: type) -> tuple[str, ...]:
    names = _CHILD_FIELDS.get(kind)
    if names is None:
        names = tuple(
            f.name for f in dataclasses.fields(kind)
            if f.name not in _SKIPPED_FIELDS and not f.name.startswith("whitespace")
        )
        _CHILD_FIELDS[kind] = names
    return names


def child_nodes(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Children in field order (source order for nearly every node type)."""
    for name in _fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            yield value
        elif isinstance(value, (list, tuple)):
            for item in value:
                if isinstance(item, cst.CSTNode):
                    yield item


def iter_tree(node: cst.CSTNode, enter_scopes: bool = True) -> Iterator[cst.CSTNode]:
    """Pre-order; with `enter_scopes=False`, nested defs, classes and lambdas are not entered."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if not enter_scopes and current is not node and isinstance(current, SCOPE_NODES):
            continue
        children = list(child_nodes(current))
        children.reverse()
        stack.extend(children)


def calls_in(node: cst.CSTNode) -> list[cst.Call]:
    """Calls executed by `node` itself, in source order (nested defs and lambdas excluded)."""
    return [n for n in iter_tree(node, enter_scopes=False) if isinstance(n, cst.Call)]


def calls_in_evaluation_order(node: cst.CSTNode) -> list[cst.Call]:
    """Calls in the order they run: arguments before the call that receives them."""
    calls: list[cst.Call] = []

    def visit(current: cst.CSTNode) -> None:
        if current is not node and isinstance(current, SCOPE_NODES):
            return
        for child in child_nodes(current):
            visit(child)
        if isinstance(current, cst.Call):
            calls.append(current)

    visit(node)
    return calls


COMPREHENSIONS = (cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp)
# What runs its body once per item (`ModuleFacts.loops_around`).
LOOPS = (cst.For, cst.While, *COMPREHENSIONS)


def returns_in(node: cst.CSTNode) -> list[cst.Return]:
    return [n for n in iter_tree(node, enter_scopes=False) if isinstance(n, cst.Return)]


def _store_target_reads(target: cst.CSTNode) -> list[cst.CSTNode]:
    """What an assignment target reads: `a.b = ...` reads `a`, `a[i] = ...` reads `a` and `i`."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return [node for element in target.elements for node in _store_target_reads(element.value)]
    if isinstance(target, cst.StarredElement):
        return _store_target_reads(target.value)
    if isinstance(target, cst.Attribute):
        return [target.value]
    if isinstance(target, cst.Subscript):
        return [target.value, *target.slice]
    return []


def read_names(node: cst.CSTNode, enter_scopes: bool = True) -> list[cst.Name]:
    """Names read by some code: not attribute names, keywords, parameters or def names.
    With `enter_scopes=False`, the bodies of nested defs, classes and lambdas are skipped."""
    names: list[cst.Name] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name):
            names.append(current)
        elif isinstance(current, cst.Attribute):
            stack.append(current.value)
        elif isinstance(current, cst.Arg):
            stack.append(current.value)
        elif isinstance(current, cst.Param):
            if current.default is not None:
                stack.append(current.default)
        elif isinstance(current, cst.FunctionDef):
            stack.extend(d.decorator for d in current.decorators)
            stack.append(current.params)
            if enter_scopes or current is node:
                stack.append(current.body)
        elif isinstance(current, cst.ClassDef):
            stack.extend(b.value for b in current.bases)
            if enter_scopes or current is node:
                stack.append(current.body)
        elif isinstance(current, cst.Lambda) and not enter_scopes and current is not node:
            stack.append(current.params)
        elif isinstance(current, (cst.Import, cst.ImportFrom)):
            continue
        elif isinstance(current, cst.AssignTarget):
            stack.extend(_store_target_reads(current.target))
        elif isinstance(current, (cst.For, cst.CompFor)):
            stack.extend(_store_target_reads(current.target))
            stack.extend(child for child in child_nodes(current) if child is not current.target)
        elif isinstance(current, (cst.AsName, cst.NameItem)):
            continue  # `with x as name`, `except E as name`, `global name`
        elif isinstance(current, (cst.AnnAssign, cst.NamedExpr)):
            stack.extend(_store_target_reads(current.target))
            stack.extend(child for child in child_nodes(current) if child is not current.target)
        else:
            stack.extend(child_nodes(current))
    return names


def is_main_guard(statement: cst.CSTNode) -> bool:
    """`if __name__ == "__main__":`"""
    if not isinstance(statement, cst.If) or not isinstance(statement.test, cst.Comparison):
        return False
    test = statement.test
    parts = [test.left] + [target.comparator for target in test.comparisons]
    names = {p.value for p in parts if isinstance(p, cst.Name)}
    strings = {p.evaluated_value for p in parts if isinstance(p, cst.SimpleString)}
    return "__name__" in names and "__main__" in strings


def fork_child_statements(module: cst.Module, fork_call: cst.Call) -> list[cst.CSTNode]:
    """The statements a child runs after `pid = os.fork()`: the branch of the following
    `if pid == 0:` / `if not pid:` (or the `else` of `if pid:`), else everything after the fork
    in the same block (parent and child both run it)."""
    block, index = _statement_holding(module, fork_call)
    if block is None:
        return []
    statement = block[index]
    pid = None
    if isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Assign):
        target = statement.body[0].targets[0].target
        pid = target.value if isinstance(target, cst.Name) else None
    rest = list(block[index + 1:])
    for following in rest:
        if pid is not None and isinstance(following, cst.If):
            branch = _child_branch(following, pid)
            if branch is not None:
                return list(branch)
    return rest


def _child_branch(node: cst.If, pid: str):
    test = node.test
    is_pid = lambda e: isinstance(e, cst.Name) and e.value == pid  # noqa: E731
    is_zero = lambda e: isinstance(e, cst.Integer) and e.value == "0"  # noqa: E731
    otherwise = node.orelse.body.body if isinstance(node.orelse, cst.Else) else ()
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) and is_pid(test.expression):
        return node.body.body
    if is_pid(test):
        return otherwise
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        operator, right = test.comparisons[0].operator, test.comparisons[0].comparator
        sides = (test.left, right)
        if any(is_pid(side) for side in sides) and any(is_zero(side) for side in sides):
            if isinstance(operator, (cst.Equal, cst.Is)):
                return node.body.body
            if isinstance(operator, (cst.NotEqual, cst.GreaterThan, cst.IsNot)):
                return otherwise
    return None


def _statement_holding(root: cst.CSTNode, node: cst.CSTNode):
    """(the statement list, index) of the statement that contains `node`, innermost first."""
    stack = [root]
    while stack:
        current = stack.pop()
        body = getattr(current, "body", None)
        statements = body if isinstance(body, (list, tuple)) else getattr(body, "body", None)
        if isinstance(statements, (list, tuple)):
            for index, statement in enumerate(statements):
                if statement is node or any(inner is node for inner in iter_tree(statement, enter_scopes=False)):
                    if isinstance(statement, cst.SimpleStatementLine):
                        return statements, index
                    stack = [statement]
                    break
            else:
                continue
            continue
        stack.extend(child_nodes(current))
    return None, 0
