"""TFP301 fix: move the per-task building statements into a worker initializer.

    def predict(row):                          def _init_predict():
        model = load_model(PATH)       ->          global model
        return model.predict(row)                  model = load_model(PATH)

    Pool(2)                                    def predict(row):
                                                   return model.predict(row)

                                               Pool(2, initializer=_init_predict)

Offered only when the moved statements do not read the task's arguments, the names they bind are
not bound again later in the function nor at module level, and the function is used only as the
callable of this pool.
"""

from __future__ import annotations

import libcst as cst

from tfproc_lint.analysis.file_analysis import FileAnalysis, Owner
from tfproc_lint.analysis.symbols import FunctionInfo, dotted_name
from tfproc_lint.analysis.walk import calls_in, iter_tree, read_names
from tfproc_lint.diagnostics import Applicability
from tfproc_lint.fixes.common import add_keyword, split_docstring, unique_name
from tfproc_lint.fixes.base import FixBuilder

_LEAVES_FUNCTION = (cst.Return, cst.Yield, cst.Await, cst.Global, cst.Nonlocal, cst.Break, cst.Continue)


class MoveStateToInitializer(FixBuilder):
    title = "build the state once per worker in a new Pool(initializer=...)"
    applicability = Applicability.UNSAFE

    def __init__(self, owner: Owner, function: FunctionInfo, builders: list[cst.Call]) -> None:
        self.owner = owner
        self.function = function
        self.builders = builders  # the calls that build state on every task

    def plan(self, analysis: FileAnalysis) -> dict | None:
        info, node = self.function, self.function.node
        if info.class_info is not None or info.scope.parent is not analysis.symbols.module_scope:
            return None
        if not used_only_by(analysis, node.name.value, self.owner):
            return None
        docstring, statements = split_docstring(node.body)
        builders = set(self.builders)
        moved = hoistable_prefix(statements, parameter_names(node),
                                 lambda statement: any(call in builders for call in calls_in(statement)))
        if not moved or len(moved) == len(statements):
            return None
        rest = statements[len(moved):]
        names = bound_names(moved)
        if not names or names & bound_names(rest) or names & set(analysis.symbols.module_scope.bindings):
            return None
        initializer = unique_name(analysis, f"_init_{node.name.value}")
        init_def = initializer_def(initializer, sorted(names), moved, node)
        new_body = node.body.with_changes(body=[*docstring, *rest])
        pool = self.owner.construction
        mapping = {
            node: lambda updated: cst.FlattenSentinel([init_def, updated.with_changes(body=new_body)]),
            pool: lambda updated: add_keyword(updated, "initializer", cst.Name(initializer)),
        }
        return mapping


def used_only_by(analysis: FileAnalysis, name: str, owner: Owner) -> bool:
    """Every read of `name` in the module is a callable given to `owner`'s pool."""
    callables = {c.callable for c in analysis.crossings if c.owner.origin is owner.construction}
    reads = [n for n in read_names(analysis.module) if n.value == name]
    return bool(reads) and all(read in callables for read in reads)


def parameter_names(node: cst.FunctionDef) -> set[str]:
    params = node.params
    names = {p.name.value for p in [*params.posonly_params, *params.params, *params.kwonly_params]}
    for extra in (params.star_arg, params.star_kwarg):
        if isinstance(extra, cst.Param):
            names.add(extra.name.value)
    return names


def hoistable_prefix(statements: list, parameters: set[str], builds_state) -> list:
    """The leading statements that read no parameter, up to the last one that builds state."""
    independent = []
    for statement in statements:
        if {n.value for n in read_names(statement)} & parameters:
            break
        if any(isinstance(n, _LEAVES_FUNCTION) for n in iter_tree(statement, enter_scopes=False)):
            break
        independent.append(statement)
    last = max((i for i, s in enumerate(independent) if builds_state(s)), default=-1)
    return independent[: last + 1]


def bound_names(statements: list) -> set[str]:
    """Names the statements bind in the function's scope."""
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


def initializer_def(name: str, globals_: list[str], statements: list, template: cst.FunctionDef) -> cst.FunctionDef:
    declaration = cst.SimpleStatementLine([cst.Global([cst.NameItem(cst.Name(g)) for g in globals_])])
    blank_lines = []
    for line in template.leading_lines:
        if line.comment is not None:
            break
        blank_lines.append(line)
    return cst.FunctionDef(
        name=cst.Name(name),
        params=cst.Parameters(),
        body=template.body.with_changes(body=[declaration, *statements]),
        leading_lines=blank_lines,
    )
