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

from tfproc_lint.analysis.file_analysis import FileAnalysis
from tfproc_lint.analysis.kinds import Kind
from tfproc_lint.analysis.symbols import FunctionInfo
from tfproc_lint.analysis.values import argument
from tfproc_lint.analysis.walk import calls_in, iter_tree, read_names
from tfproc_lint.analysis.workers import Owner
from tfproc_lint.diagnostics import Applicability
from tfproc_lint.fixes.base import FixBuilder, Plan, Refusal
from tfproc_lint.fixes.common import (
    add_keyword, blank_lines_above, bound_names, global_declarations, initializer_function, rename, split_docstring,
    unique_name, worker_global_name,
)

_LEAVES_FUNCTION = (cst.Return, cst.Yield, cst.Await, cst.Global, cst.Nonlocal, cst.Break, cst.Continue)


class MoveStateToInitializer(FixBuilder):
    applicability = Applicability.UNSAFE

    def __init__(self, owner: Owner, tasks: list[tuple[FunctionInfo, list[cst.Call]]]) -> None:
        """`tasks`: every task of the pool that builds state on every task, with its building
        calls, in source order. One initializer has to serve them all: they are rewritten
        together when they build the same thing, else the fix is refused."""
        self.owner = owner
        self.tasks = tasks
        pool = "ProcessPoolExecutor" if owner.value.kind is Kind.EXECUTOR else "Pool"
        self.title = f"build the state once per worker in a new {pool}(initializer=...)"
        if len(tasks) > 1:
            self.title += f" shared by {', '.join(f'`{info.node.name.value}`' for info, _ in tasks)}"

    def plan(self, analysis: FileAnalysis) -> Plan | Refusal:
        existing = argument(self.owner.construction, 1 if self.owner.value.kind is Kind.POOL else 2, "initializer")
        if existing is not None and not (isinstance(existing, cst.Name) and existing.value == "None"):
            return self.refuse(f"the pool has an initializer already (`{analysis.code(existing, 30)}`): "
                               "move the build into it")
        prefixes = []
        for info, builders in self.tasks:
            moved = self._prefix(analysis, info, builders)
            if isinstance(moved, Refusal):
                return moved
            prefixes.append(moved)
        texts = {tuple(analysis.module.code_for_node(statement).strip() for statement in moved) for moved in prefixes}
        if len(texts) > 1:
            names = " and ".join(f"`{info.node.name.value}`" for info, _ in self.tasks)
            return self.refuse(f"{names} of the same pool build different state on every task: one initializer "
                               "has to build for every task")
        exported: set[str] = set()
        for (info, _), moved in zip(self.tasks, prefixes):
            _, statements = split_docstring(info.node.body)
            rest = statements[len(moved):]
            exported |= bound_names(moved) & {n.value for s in rest for n in read_names(s)}
        if not exported:
            return self.refuse()
        exported_names = sorted(exported)
        taken: set[str] = set()
        renames = {name: worker_global_name(analysis, name, taken) for name in exported_names}
        first = self.tasks[0][0].node
        initializer = unique_name(analysis, f"_init_{first.name.value}" if len(self.tasks) == 1 else "_init_worker")
        globals_ = [renames[name] for name in exported_names]
        mapping: dict = {}
        for (info, _), moved in zip(self.tasks, prefixes):
            for statement in split_docstring(info.node.body)[1]:
                rename(mapping, statement, renames)
        counts = {info.node: len(moved) for (info, _), moved in zip(self.tasks, prefixes)}

        def without_prefix(updated: cst.FunctionDef, count: int) -> cst.FunctionDef:
            kept_doc, updated_statements = split_docstring(updated.body)
            return updated.with_changes(body=updated.body.with_changes(body=[*kept_doc, *updated_statements[count:]]))

        def rewrite_first(updated: cst.FunctionDef):
            _, updated_statements = split_docstring(updated.body)
            count = counts[first]
            init_def = initializer_function(initializer, [], globals_, updated_statements[:count], updated)
            task = without_prefix(updated, count).with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
            return cst.FlattenSentinel([*global_declarations(globals_, blank_lines_above(updated)), init_def, task])

        mapping[first] = rewrite_first
        for info, _ in self.tasks[1:]:
            mapping[info.node] = lambda updated, count=counts[info.node]: without_prefix(updated, count)
        mapping[self.owner.construction] = lambda updated: add_keyword(updated, "initializer", cst.Name(initializer))
        return mapping

    def _prefix(self, analysis: FileAnalysis, info: FunctionInfo, builders: list[cst.Call]) -> list | Refusal:
        """The statements that move out of one task, or why none can."""
        node = info.node
        if info.class_info is not None or info.scope.parent is not analysis.symbols.module_scope:
            return self.refuse(f"`{node.name.value}` is a method or a nested function")
        if not used_only_by(analysis, node.name.value, self.owner):
            return self.refuse(f"`{node.name.value}` is also used outside this pool")
        _, statements = split_docstring(node.body)
        wanted = set(builders)
        moved = hoistable_prefix(statements, parameter_names(node),
                                 lambda statement: any(call in wanted for call in calls_in(statement)))
        if not moved or len(moved) == len(statements):
            return self.refuse("the building statements read the task's arguments or end the task")
        if bound_names(moved) & bound_names(statements[len(moved):]):
            return self.refuse("the task rebinds the names the build binds")
        return moved


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
