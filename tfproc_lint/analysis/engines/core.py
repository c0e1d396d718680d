"""What every engine shares: the `Engine` record each engine module fills in, the owner and route of
an engine crossing, and what the rules ask of one (which engine, the function its workers run,
whether it runs many times).

An engine crossing's owner has kind `Kind.ENGINE` (never a pool owner: the start-method rules do
not apply), `pickled=Pickling.ALWAYS`, the cloudpickle pickler, and its `task` (values.EngineTask):
the engine ("ray", "dask", "spark"), how many times the callable runs (TaskGrain), what the call
does (TaskCall) and the engine's own details (for Ray, the `num_gpus` node).
"""

from __future__ import annotations

from typing import Callable

import libcst as cst

from tfproc_lint.analysis.kinds import STATE, Kind
from tfproc_lint.analysis.routes import Crossing, Route, RouteKind
from tfproc_lint.analysis.symbols import FunctionInfo, Scope
from tfproc_lint.analysis.values import EngineTask, Pickler, TaskCall, Value
from tfproc_lint.analysis.walk import calls_in, iter_tree, returns_in
from tfproc_lint.analysis.workers import Worker, WorkerKind
from tfproc_lint.knowledge.engines import EngineFacts, TaskGrain
from tfproc_lint.records import record

MAX_DEPTH = 8


def _sends_the_crossing(routes, crossing: Crossing, receiver: str, method: str, task: cst.Arg) -> Crossing | None:
    return crossing


def _always(analysis, crossing: Crossing) -> bool:
    return True


def _model_arrives(crossing: Crossing) -> str | None:
    return None


def _no_declared_tasks(analysis) -> set[FunctionInfo]:
    return set()


@record(eq=False)
class Engine:
    """One distributed engine: its knowledge (name, noun, remedies: knowledge/engines.py) and what its
    module of analysis/engines/ provides to find and judge its crossings. The defaults are what most
    engines do: a method of its objects sends the crossing as made, everything is pickled, a Keras
    model arrives, no function runs in its workers by declaration alone."""
    facts: EngineFacts
    task_decorators: frozenset[str]  # qualified names of decorators whose function runs in its workers
    object_nouns: dict[str, str]  # its object types (knowledge.ENGINE_FACTORIES: "ray.dataset") -> route noun
    routes: type  # its mixin of EngineRoutes (methods prefixed with its name, or private: mixins never clash)
    # (routes, site, name): the crossings of a call the engine makes by name, not as a method of one of
    # its objects (a list, maybe empty), or None when the call is not the engine's
    call_crossings: Callable[..., list[Crossing] | None]
    # (routes, crossing, receiver, method, task): a method of its objects that runs a function
    # (knowledge.ENGINE_TASK_METHODS), given the crossing made for it: the crossing, or None for none
    task_method: Callable[..., Crossing | None] = _sends_the_crossing
    pickles: Callable[..., bool] = _always  # (analysis, crossing): whether what it sends is pickled
    model_failure: Callable[[Crossing], str | None] = _model_arrives  # what befalls a Keras model it sends
    declared_tasks: Callable[..., set[FunctionInfo]] = _no_declared_tasks  # (analysis): beyond its crossings

    @property
    def name(self) -> str:
        return self.facts.name

    @property
    def noun(self) -> str:
        return self.facts.noun

    @property
    def remedy(self) -> str:
        """How to send TF state instead (TFP101-TFP103)."""
        return self.facts.remedy

    @property
    def per_worker_recipe(self) -> str:
        """How to load once per worker instead of once per task (TFP301)."""
        return self.facts.per_worker_recipe

    def batching_recipe(self, rates: dict[str, int]) -> str:
        """How to run the model on batches of rows (TFP303), with the measured rows/s."""
        return self.facts.batching_recipe.format(**rates)


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
