"""What every engine shares: the owner and route of an engine crossing, and what the rules ask of
one (which engine, the function its workers run, whether it runs many times).

An engine crossing's owner has kind `Kind.ENGINE` (never a pool owner: the start-method rules do
not apply), `pickled=Pickling.ALWAYS`, the cloudpickle pickler, and its `task` (values.EngineTask):
the engine ("ray", "dask", "spark"), how many times the callable runs (TaskGrain), what the call
does (TaskCall) and the engine's own details (for Ray, the `num_gpus` node).
"""

from __future__ import annotations

import libcst as cst

from tfproc_lint.analysis.kinds import STATE, Kind
from tfproc_lint.analysis.routes import Crossing, Route, RouteKind
from tfproc_lint.analysis.symbols import FunctionInfo, Scope
from tfproc_lint.analysis.values import EngineTask, Pickler, TaskCall, Value
from tfproc_lint.analysis.walk import calls_in, iter_tree, returns_in
from tfproc_lint.analysis.workers import Worker, WorkerKind
from tfproc_lint.knowledge.engines import TaskGrain

MAX_DEPTH = 8


def route(label: str, method: str = "") -> Route:
    return Route(RouteKind.ENGINE, method, label=label)


def owner(engine: str, call: cst.Call, grain: TaskGrain, does: TaskCall, **details) -> Value:
    """The owner of an engine crossing; `details`: EngineTask's other fields."""
    return Value(Kind.ENGINE, origin=call, detail=engine, pickler=Pickler.CLOUDPICKLE,
                 task=EngineTask(engine, grain, does, **details))


def task_of(crossing: Crossing) -> EngineTask:
    """The engine task of an engine crossing (`is_engine`)."""
    return crossing.owner.task


def engine_of_type(kind: str) -> str:
    """"dask.client" -> "dask": every engine object's type starts with its engine's name."""
    return kind.split(".")[0]


# What the rules ask ---------------------------------------------------------------------------------
def is_engine(crossing: Crossing) -> bool:
    return crossing.owner.kind is Kind.ENGINE


def engine(crossing: Crossing) -> str:
    return crossing.owner.detail


def task_worker(analysis, crossing: Crossing):
    """The worker that runs the crossing's callable; for `ray.remote(f)` bound to a name, `f`."""
    worker = analysis.worker(crossing.callable, crossing.callable_scope, crossing.site.order)
    task = crossing.owner.task
    info = task.function if task is not None else None
    if worker.function is None and isinstance(info, FunctionInfo):
        return Worker(WorkerKind.FUNCTION, crossing.callable, crossing.callable_scope, info)
    imported = task.imported if task is not None else None
    if worker.imported is None and imported is not None:
        return Worker(WorkerKind.UNKNOWN, crossing.callable, crossing.callable_scope, imported=imported)
    return worker


def many_tasks(analysis, crossing: Crossing) -> bool:
    """The callable runs for many items, rows or batches, or is submitted in a loop."""
    task = crossing.owner.task
    if task is None:
        return False
    if task.grain.runs_many:
        return True
    return task.grain is TaskGrain.ONE and bool(analysis.loops_around(crossing.call))


def is_script(analysis, crossing: Crossing) -> bool:
    """The engine pickles functions of this module by value (with the globals they read) only
    when the module is the driver's `__main__`: a script's `if __name__ == "__main__":` block, a
    notebook, or engine calls at module level."""
    return bool(analysis.notebook or analysis.symbols.main_guard_orders or crossing.site.scope.kind == "module")


def enclosing_functions(scope: Scope | None) -> list[FunctionInfo]:
    found = []
    while scope is not None:
        if scope.kind == "function" and scope.function is not None:
            found.append(scope.function)
        scope = scope.parent
    return found


def returns_state(analysis, function: FunctionInfo, node=None, kinds=STATE, depth: int = 0) -> bool:
    """The function returns TF state of these kinds (`node`: one of its return values; else any),
    also through a same-file function whose result it returns."""
    values = [node] if node is not None else [r.value for r in returns_in(function.node.body) if r.value is not None]
    for value_node in values:
        if analysis.classifier.classify(value_node, function.scope, analysis.symbols.end_of_file).kind in kinds:
            return True
        site = analysis.site(value_node) if isinstance(value_node, cst.Call) else None
        callee = analysis.callee(value_node, site) if site is not None else None
        if callee is not None and callee is not function and depth < 2 \
                and returns_state(analysis, callee, None, kinds, depth + 1):
            return True
    return False


def code_reached(analysis, functions: list[FunctionInfo]) -> set:
    """The nodes of these functions and of the module's functions they call (one level)."""
    nodes = set()
    for function in functions:
        nodes.update(iter_tree(function.node))
        for call in calls_in(function.node.body):
            site = analysis.site(call)
            callee = analysis.callee(call, site) if site is not None else None
            if callee is not None:
                nodes.update(iter_tree(callee.node))
    return nodes
