"""Which names of a function carry its arguments' data (a forward pass in statement order)."""

from __future__ import annotations

import libcst as cst

from tfproc_lint.analysis.walk import iter_tree, read_names


def derived_names(function: cst.FunctionDef) -> set[str]:
    """The parameters, and every local name assigned (directly or through other such names) from
    an expression that reads one: `rows = task["rows"]`, `for x in rows`, `with open(path) as f`."""
    params = function.params
    names = {p.name.value for p in [*params.posonly_params, *params.params, *params.kwonly_params]}
    for extra in (params.star_arg, params.star_kwarg):
        if isinstance(extra, cst.Param):
            names.add(extra.name.value)
    for _ in range(2):  # a second pass catches names assigned in a loop before their source
        for node in iter_tree(function.body, enter_scopes=False):
            source, targets = _flow(node)
            if source is not None and reads_any(source, names):
                names.update(targets)
    return names


def reads_any(node: cst.CSTNode, names: set[str]) -> bool:
    return any(name.value in names for name in read_names(node))


def _flow(node: cst.CSTNode) -> tuple[cst.CSTNode | None, list[str]]:
    if isinstance(node, cst.Assign):
        return node.value, [n for t in node.targets for n in _bound(t.target)]
    if isinstance(node, (cst.AnnAssign, cst.AugAssign)) and node.value is not None:
        return node.value, _bound(node.target)
    if isinstance(node, (cst.For, cst.CompFor)):
        return node.iter, _bound(node.target)
    if isinstance(node, cst.WithItem) and node.asname is not None:
        return node.item, _bound(node.asname.name)
    if isinstance(node, cst.NamedExpr):
        return node.value, _bound(node.target)
    return None, []


def _bound(target: cst.CSTNode) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for element in target.elements for n in _bound(element.value)]
    if isinstance(target, cst.StarredElement):
        return _bound(target.value)
    return []
