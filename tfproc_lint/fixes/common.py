"""Shared pieces of the LibCST rewrites: node replacement, imports, unique names, main guards."""

from __future__ import annotations

import dataclasses
from typing import Callable, Union

import libcst as cst

from tfproc_lint.analysis.file_analysis import FileAnalysis
from tfproc_lint.analysis.symbols import dotted_name
from tfproc_lint.analysis.walk import calls_in, child_nodes, iter_tree

Replacement = Union[cst.CSTNode, cst.FlattenSentinel, cst.RemovalSentinel, Callable[[cst.CSTNode], object]]


_ADDED_IMPORTS = "imports added by this rewrite"  # a mapping key that is no node


class _Replace(cst.CSTTransformer):
    """LibCST's own transformer walk, entering only the nodes on the way to a replaced node: a
    full walk rebuilds every node of the module (about half a parse on a large file); the others
    are kept as they are, which prints the same code."""

    def __init__(self, mapping: dict[cst.CSTNode, Replacement], on_the_way: set[int]) -> None:
        super().__init__()
        self.mapping = mapping
        self.on_the_way = on_the_way

    def on_visit(self, node) -> bool:
        return id(node) in self.on_the_way

    def on_leave(self, original_node, updated_node):
        replacement = self.mapping.get(original_node)
        if replacement is None:
            return updated_node
        return replacement(updated_node) if callable(replacement) else replacement


def replace_nodes(module: cst.Module, mapping: dict[cst.CSTNode, Replacement],
                  ancestors: Callable[[cst.CSTNode], list] | None = None) -> cst.Module:
    """Replace nodes by identity; a callable receives the node with its children already updated.
    `ancestors` (FileAnalysis.ancestors, for `module`'s analysis) finds the way to each target
    without walking the whole tree."""
    targets = [node for node in mapping if isinstance(node, cst.CSTNode)]
    on_the_way = _ways_up(module, targets, ancestors) if ancestors is not None else None
    if on_the_way is None:
        on_the_way = set()
        _mark_ways(module, {id(node) for node in targets}, on_the_way)
    return module.visit(_Replace(mapping, on_the_way))


def _ways_up(module: cst.Module, targets: list[cst.CSTNode], ancestors) -> set[int] | None:
    """The ids of the targets and of every node above them, or None if a target is not in the
    ancestors' map (it skips whitespace and punctuation: `_mark_ways` then walks the tree)."""
    on_the_way = {id(module)}
    for target in targets:
        above = ancestors(target)
        if target is not module and (not above or above[-1] is not module):
            return None
        on_the_way.add(id(target))
        on_the_way.update(id(node) for node in above)
    return on_the_way


def _mark_ways(node: cst.CSTNode, targets: set[int], on_the_way: set[int]) -> bool:
    """Add to `on_the_way` the ids of `node` and its descendants that are or hold a target; every
    dataclass field is followed (whitespace and punctuation nodes too), so no target is missed."""
    found = id(node) in targets
    for field in dataclasses.fields(node):
        value = getattr(node, field.name)
        if isinstance(value, cst.CSTNode):
            found = _mark_ways(value, targets, on_the_way) or found
        elif isinstance(value, (list, tuple)):
            for item in value:
                if isinstance(item, cst.CSTNode):
                    found = _mark_ways(item, targets, on_the_way) or found
    if found:
        on_the_way.add(id(node))
    return found


def module_import_name(analysis: FileAnalysis, module_name: str) -> str | None:
    """The local name of a top-level `import module_name [as alias]`, if there is one."""
    for name, bindings in analysis.symbols.module_scope.bindings.items():
        if len(bindings) == 1 and bindings[0].kind == "import" and bindings[0].qualified == module_name:
            return name
    return None


def add_import(analysis: FileAnalysis, module_name: str, mapping: dict) -> str | None:
    """Ensure `import module_name` at the top of the module; returns the name to use, or None
    when the name is taken by something else."""
    existing = module_import_name(analysis, module_name)
    if existing:
        return existing
    if module_name in analysis.symbols.module_scope.bindings:
        return None
    added = mapping.setdefault(_ADDED_IMPORTS, set())
    if module_name in added:
        return module_name
    added.add(module_name)
    # Before the first top-level import, taking over the comments and blank lines above it.
    body = analysis.module.body
    movable = [s for s in body if not _is_docstring(s) and not _is_future_import(s)]
    if not movable:
        return None
    anchor = next((s for s in movable if _is_import_line(s)), movable[0])
    statement = cst.parse_statement(f"import {module_name}\n")
    previous = mapping.get(anchor)

    def insert(updated, previous=previous):
        updated = _apply(previous, updated)
        first = statement.with_changes(leading_lines=updated.leading_lines)
        return cst.FlattenSentinel([first, updated.with_changes(leading_lines=[])])

    mapping[anchor] = insert
    return module_name


def _apply(replacement, updated):
    if replacement is None:
        return updated
    return replacement(updated) if callable(replacement) else replacement


def _is_docstring(statement: cst.CSTNode) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Expr)
            and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))


def split_docstring(body: cst.BaseSuite) -> tuple[list, list]:
    """([docstring statement] or [], the other statements) of a function body."""
    statements = list(body.body)
    if statements and _is_docstring(statements[0]):
        return statements[:1], statements[1:]
    return [], statements


def _is_future_import(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and any(
        isinstance(small, cst.ImportFrom) and isinstance(small.module, cst.Name) and small.module.value == "__future__"
        for small in statement.body)


def _is_import_line(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body)


def unique_name(analysis: FileAnalysis, wanted: str) -> str:
    taken = set(analysis.symbols.module_scope.bindings)
    name, number = wanted, 2
    while name in taken:
        name, number = f"{wanted}_{number}", number + 1
    return name


def runs_only_in_the_parent(analysis: FileAnalysis, node: cst.CSTNode) -> bool:
    """Not run on import (neither at module level outside the `__main__` block, nor in a function
    called there): a spawned child, which re-imports the main module, does not run it again."""
    return not analysis.execution.runs_on_import(node)


def imported_worker(analysis: FileAnalysis, workers) -> str | None:
    """The reason no fix is offered for the first worker that names a function imported from another
    module (`from scoring import score`, `scoring.score`): a rewrite of this file cannot check or
    change that code (what spawn re-imports in each worker, its globals)."""
    for worker in workers:
        if worker is None or worker.function is not None or worker.lambda_node is not None:
            continue
        head = worker.node
        while isinstance(head, cst.Attribute):
            head = head.value
        site = analysis.site_around(worker.node)
        if not isinstance(head, cst.Name) or site is None:
            continue
        bindings = analysis.symbols.bindings_at(head.value, site.scope, site.order)
        if len(bindings) != 1 or bindings[0].kind != "import":
            continue
        qualified = analysis.classifier.qualified_name(worker.node, site.scope, site.order, raw=True)
        module = f" (`{qualified.rpartition('.')[0]}`)" if qualified and "." in qualified else ""
        return (f"the worker `{analysis.code(worker.node, 40)}` is defined in another module{module}, "
                "which a rewrite of this file cannot check")
    return None


def quoted_names(names) -> str:
    """`a`, `a` and `b`, `a`, `b` and `c`."""
    quoted = [f"`{name}`" for name in names]
    return ", ".join(quoted[:-1]) + " and " + quoted[-1] if len(quoted) > 1 else "".join(quoted)


def spawn_context(module_name: str) -> cst.Call:
    return cst.Call(
        func=cst.Attribute(cst.Name(module_name), cst.Name("get_context")),
        args=[cst.Arg(cst.SimpleString('"spawn"'))],
    )


def add_keyword(call: cst.Call, name: str, value: cst.BaseExpression) -> cst.Call:
    """`f(a, b)` -> `f(a, b, name=value)`; a trailing comma stays trailing."""
    args = list(call.args)
    new = cst.Arg(value=value, keyword=cst.Name(name),
                  equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
    if args:
        last = args[-1]
        new = new.with_changes(comma=last.comma if isinstance(last.comma, cst.Comma) else cst.MaybeSentinel.DEFAULT)
        args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    args.append(new)
    return call.with_changes(args=args)


# Worker globals: one style for every initializer rewrite ------------------------------------------
#
#     _model = None
#
#
#     def _init_model(model_path):
#         global _model
#         _model = load_model(model_path)

def worker_global_name(analysis: FileAnalysis, name: str, taken: set[str]) -> str:
    """`model` -> `_model` (or `_model_2` when taken)."""
    wanted = "_" + name.lstrip("_")
    chosen = unique_name(analysis, wanted)
    number = 2
    while chosen in taken:
        chosen, number = f"{wanted}_{number}", number + 1
    taken.add(chosen)
    return chosen


def global_declarations(globals_: list[str], leading_lines) -> list[cst.SimpleStatementLine]:
    """`_model = None` lines, the first taking over `leading_lines`."""
    lines = [cst.parse_statement(f"{name} = None\n") for name in globals_]
    if lines:
        lines[0] = lines[0].with_changes(leading_lines=leading_lines)
    return lines


def initializer_function(name: str, params: list[str], globals_: list[str], statements: list,
                         template: cst.FunctionDef) -> cst.FunctionDef:
    declaration = cst.SimpleStatementLine([cst.Global([cst.NameItem(cst.Name(g)) for g in globals_])])
    return cst.FunctionDef(
        name=cst.Name(name),
        params=cst.Parameters([cst.Param(cst.Name(p)) for p in params]),
        body=template.body.with_changes(body=[declaration, *statements]),
        leading_lines=[cst.EmptyLine(), cst.EmptyLine()],
    )


def blank_lines_above(node: cst.CSTNode) -> list:
    """The blank lines above a statement, up to its first comment line."""
    blank = []
    for line in getattr(node, "leading_lines", ()):
        if line.comment is not None:
            break
        blank.append(line)
    return blank


_NOT_VARIABLES = {
    cst.Attribute: ("attr",), cst.Arg: ("keyword",), cst.FunctionDef: ("name",), cst.ClassDef: ("name",),
    cst.Param: ("name",), cst.ImportAlias: ("name", "asname"), cst.ImportFrom: ("module",),
}


def variable_nodes(root: cst.CSTNode, names: set[str]) -> list[cst.Name]:
    """Name nodes that stand for one of the variables `names` (read or written) under `root`:
    not attribute names, keyword names or definition names; nested defs and lambdas excluded."""
    found: list[cst.Name] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name):
            if node.value in names:
                found.append(node)
            continue
        if node is not root and isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        skipped = {getattr(node, field) for field in _NOT_VARIABLES.get(type(node), ())}
        stack.extend(child for child in child_nodes(node) if child not in skipped)
    return found


def rename(mapping: dict, root: cst.CSTNode, renames: dict[str, str]) -> None:
    """Plan renaming the variables in `renames` under `root`."""
    for node in variable_nodes(root, set(renames)):
        mapping[node] = cst.Name(renames[node.value])


def drop_unused_import(analysis: FileAnalysis, name: str, reads_left: int, mapping: dict) -> None:
    """After a rewrite that leaves `reads_left` reads of an imported `name` (e.g. `partial`),
    remove the import when none is left."""
    if reads_left:
        return
    bindings = analysis.symbols.module_scope.bindings.get(name, [])
    if len(bindings) != 1 or bindings[0].kind != "import":
        return
    for statement in analysis.module.body:
        if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
            continue
        small = statement.body[0]
        if isinstance(small, cst.Import) and [_alias_name(a) for a in small.names] == [name]:
            mapping[statement] = cst.RemovalSentinel.REMOVE
            return
        if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
            kept = [alias for alias in small.names if _alias_name(alias) != name]
            if len(kept) == len(small.names):
                continue
            if not kept:
                mapping[statement] = cst.RemovalSentinel.REMOVE
            else:
                kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
                mapping[small] = small.with_changes(names=kept)
            return


def _alias_name(alias: cst.ImportAlias) -> str:
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value
    return dotted_name(alias.name).split(".")[0]


def parameter_name_for(node: cst.BaseExpression) -> str | None:
    """A parameter name derived from an argument: `MODEL_PATH` -> `model_path`, `args.model_dir`
    -> `model_dir`, `cfg["weights"]` -> `weights`; None for literals and other expressions."""
    if isinstance(node, cst.Name):
        return node.value.lower()
    if isinstance(node, cst.Attribute):
        return node.attr.value.lower()
    if isinstance(node, cst.Subscript) and len(node.slice) == 1:
        index = node.slice[0].slice
        if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString):
            text = index.value.evaluated_value
            if isinstance(text, str) and text.isidentifier():
                return text.lower()
    return None


def bound_names(statements: list) -> set[str]:
    """Names the statements bind in their own scope (nested definitions' bodies excluded)."""
    names: set[str] = set()

    def targets(node) -> None:
        if isinstance(node, cst.Name):
            names.add(node.value)
        elif isinstance(node, (cst.Tuple, cst.List)):
            for element in node.elements:
                targets(element.value)
        elif isinstance(node, cst.StarredElement):
            targets(node.value)

    for statement in statements:
        for node in iter_tree(statement, enter_scopes=False):
            if isinstance(node, cst.AssignTarget):
                targets(node.target)
            elif isinstance(node, (cst.AnnAssign, cst.AugAssign)):
                targets(node.target)
            elif isinstance(node, cst.WithItem) and node.asname is not None:
                targets(node.asname.name)
            elif isinstance(node, (cst.For, cst.NamedExpr)):
                targets(node.target)
            elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
                names.add(node.name.value)
            elif isinstance(node, cst.ExceptHandler) and node.name is not None:
                targets(node.name.name)
            elif isinstance(node, (cst.Import, cst.ImportFrom)) and not isinstance(node.names, cst.ImportStar):
                for alias in node.names:
                    if alias.asname is not None:
                        targets(alias.asname.name)
                    else:
                        names.add(dotted_name(alias.name).split(".")[0])
    return names


MAX_CALL_DEPTH = 4


def runs(analysis: FileAnalysis, statement: cst.CSTNode, target: cst.CSTNode, depth: int = 0, seen=None) -> bool:
    """`statement` contains `target` or calls (through functions of this file) code that does."""
    seen = set() if seen is None else seen
    if any(node is target for node in iter_tree(statement, enter_scopes=False)):
        return True
    for call in calls_in(statement):
        site = analysis.site(call)
        callee = analysis.callee(call, site) if site is not None else None
        if callee is not None and callee.node not in seen and depth < MAX_CALL_DEPTH:
            seen.add(callee.node)
            if runs(analysis, callee.node.body, target, depth + 1, seen):
                return True
    return False
