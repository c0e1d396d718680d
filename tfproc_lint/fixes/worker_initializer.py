"""TFP301 fix: move the per-task building statements into a worker initializer.

    def predict(row):                          _model = None
        model = load_model(PATH)       ->
        return model.predict(row)              def _init_predict():
                                                   global _model
    Pool(2)                                        _model = load_model(PATH)

                                               def predict(row):
                                                   return _model.predict(row)

                                               Pool(2, initializer=_init_predict)

Offered only when the moved statements do not read the task's arguments, the names they bind are
not bound again later in the function, and the function is used only as the callable of this
pool. Only the names the rest of the task reads become worker globals (`_name`); the others stay
local to the initializer.
"""

from __future__ import annotations

import libcst as cst

from tfproc_lint.analysis.file_analysis import FileAnalysis, Owner
from tfproc_lint.analysis.kinds import Kind
from tfproc_lint.analysis.symbols import FunctionInfo
from tfproc_lint.analysis.values import argument
from tfproc_lint.analysis.walk import calls_in, iter_tree, read_names
from tfproc_lint.diagnostics import Applicability
from tfproc_lint.fixes.base import FixBuilder
from tfproc_lint.fixes.common import (
    add_keyword, blank_lines_above, bound_names, global_declarations, initializer_function, rename, split_docstring,
    unique_name, worker_global_name,
)

_LEAVES_FUNCTION = (cst.Return, cst.Yield, cst.Await, cst.Global, cst.Nonlocal, cst.Break, cst.Continue)


class MoveStateToInitializer(FixBuilder):
    applicability = Applicability.UNSAFE

    def __init__(self, owner: Owner, function: FunctionInfo, builders: list[cst.Call],
                 other_building_tasks: list[str] = ()) -> None:
        self.owner = owner
        self.function = function
        self.builders = builders  # the calls that build state on every task
        self.other_building_tasks = list(other_building_tasks)  # of the same pool, as written
        pool = "ProcessPoolExecutor" if owner.value.kind is Kind.EXECUTOR else "Pool"
        self.title = f"build the state once per worker in a new {pool}(initializer=...)"

    def plan(self, analysis: FileAnalysis) -> dict | None:
        info, node = self.function, self.function.node
        existing = argument(self.owner.construction, 1 if self.owner.value.kind is Kind.POOL else 2, "initializer")
        if existing is not None and not (isinstance(existing, cst.Name) and existing.value == "None"):
            return self.refuse(f"the pool has an initializer already (`{analysis.code(existing, 30)}`): "
                               "move the build into it")
        if self.other_building_tasks:
            others = ", ".join(f"`{name}`" for name in self.other_building_tasks)
            return self.refuse(f"{others} of the same pool also build{'s' * (len(self.other_building_tasks) == 1)} "
                               "state on every task: one initializer has to build for every task")
        if info.class_info is not None or info.scope.parent is not analysis.symbols.module_scope:
            return self.refuse("the task is a method or a nested function")
        if not used_only_by(analysis, node.name.value, self.owner):
            return self.refuse(f"`{node.name.value}` is also used outside this pool")
        docstring, statements = split_docstring(node.body)
        builders = set(self.builders)
        moved = hoistable_prefix(statements, parameter_names(node),
                                 lambda statement: any(call in builders for call in calls_in(statement)))
        if not moved or len(moved) == len(statements):
            return self.refuse("the building statements read the task's arguments or end the task")
        rest = statements[len(moved):]
        bound = bound_names(moved)
        if bound & bound_names(rest):
            return self.refuse("the task rebinds the names the build binds")
        exported = sorted(bound & {n.value for s in rest for n in read_names(s)})
        if not exported:
            return None
        taken: set[str] = set()
        renames = {name: worker_global_name(analysis, name, taken) for name in exported}
        initializer = unique_name(analysis, f"_init_{node.name.value}")
        mapping: dict = {}
        for statement in statements:
            rename(mapping, statement, renames)
        globals_ = [renames[name] for name in exported]
        count = len(moved)

        def rewrite(updated: cst.FunctionDef):
            kept_doc, updated_statements = split_docstring(updated.body)
            init_def = initializer_function(initializer, [], globals_, updated_statements[:count], updated)
            task = updated.with_changes(body=updated.body.with_changes(body=[*kept_doc, *updated_statements[count:]]),
                                        leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
            return cst.FlattenSentinel([*global_declarations(globals_, blank_lines_above(updated)), init_def, task])

        mapping[node] = rewrite
        mapping[self.owner.construction] = lambda updated: add_keyword(updated, "initializer", cst.Name(initializer))
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
