"""The functions that run in the engines' workers, and what fails when TF state crosses to them
(the facts of TFP101's, TFP102's and TFP103's messages for every engine; the rules word them
with registry.py's nouns and remedies)."""

from __future__ import annotations


import libcst as cst

from tfproc_lint.analysis.engines.core import enclosing_functions, engine, is_engine, is_script, task_worker
from tfproc_lint.analysis.engines.registry import BY_NAME, ENGINES
from tfproc_lint.analysis.kinds import STATE, Kind
from tfproc_lint.analysis.routes import Crossing
from tfproc_lint.analysis.symbols import FunctionInfo, Scope
from tfproc_lint.analysis.values import TaskCall, Value
from tfproc_lint.analysis.walk import read_names
from tfproc_lint.knowledge import engines as knowledge
from tfproc_lint.records import record


def worker_functions(analysis) -> set[FunctionInfo]:
    """Functions of this module that run in the engine's workers: task callables, and what an
    engine declares (Ray remote functions and the methods of Ray actor classes)."""
    found = set()
    for crossing in analysis.crossings:
        if is_engine(crossing) and crossing.callable is not None:
            worker = task_worker(analysis, crossing)  # a decorated udf: the function it wraps
            if worker.function is not None:
                found.add(worker.function)
    if analysis.engine_routes.active:
        for each in ENGINES:
            found |= each.declared_tasks(analysis)
    return found


def fresh_process_functions(analysis) -> set[FunctionInfo]:
    """Functions that run in an engine's worker processes, where the driver's runtime never
    started: the engine unpickles them there instead of re-running the driver's module. These are
    the engine's task functions, and, in a module that uses an engine, a function never called in
    the file but handed to a call of other code (`TFCluster.run(sc, main_fun, ...)`, a helper
    that starts servers on the executors), with the functions nested in them."""
    routes = analysis.engine_routes
    if not routes.active:
        return set()
    found = worker_functions(analysis)
    called, handed = set(), set()
    for site in analysis.symbols.calls:
        callee = analysis.callee(site.node, site)
        if callee is not None:
            called.add(callee)
            continue
        for arg in site.node.args:
            info = routes.function_named(arg.value, site.scope, site.order)
            if info is not None:
                handed.add(info)
    found |= handed - called
    return {info for info in analysis.symbols.functions.values()
            if info in found or any(outer in found for outer in enclosing_functions(info.scope.parent))}


def traced_before(analysis, value: Value, order: int) -> cst.Call | None:
    """A call of the tf.function `value` in the driver before `order`: once called, it holds a
    traced FuncGraph, which cloudpickle cannot serialise (untraced, it pickles)."""
    origin = value.origin
    if origin is None:
        return None
    workers = worker_functions(analysis)
    for site in analysis.symbols.calls:
        if site.order >= order or isinstance(site.node.func, cst.Call):
            continue
        if any(function in workers for function in enclosing_functions(site.scope)):
            continue  # runs in the engine's workers, not in the driver
        callee = analysis.classifier.classify(site.node.func, site.scope, site.order)
        if callee.kind is Kind.TF_FUNCTION and callee.origin is origin:
            return site.node
    return None


def crossing_failure(analysis, crossing: Crossing, node, value: Value, captured: bool = False) -> str | None:
    """What the engine raises for TF state `value` crossing, or None when it travels (a Keras
    model, a loaded SavedModel, an untraced tf.function)."""
    name = engine(crossing)
    if not BY_NAME[name].pickles(analysis, crossing):
        return None
    if value.kind is Kind.KERAS_MODEL:
        return BY_NAME[name].model_failure(crossing)
    if value.kind is Kind.SAVED_MODEL:
        return None
    if captured:
        error = knowledge.ENGINE_CAPTURE_ERRORS[name]
    elif crossing.callable is not None or crossing.owner.task.call is TaskCall.ACTOR_METHOD:
        error = knowledge.ENGINE_SERIALIZATION_ERRORS[name]  # a task's arguments
    else:
        error = f"serialization fails in {crossing.route}"  # ray.put, scatter, broadcast
    if value.kind is Kind.TF_FUNCTION:
        traced = traced_before(analysis, value, crossing.site.order)
        if traced is None:
            return None
        return (f"it was called in the driver (line {analysis.line_of(traced)}), so it holds a traced graph: "
                f"{error} (cannot pickle 'FuncGraph' object)")
    if value.kind is Kind.DATASET:
        return f"{error} (a Dataset does not pickle: InvalidArgumentError on its variant tensor)"
    return f"{error} (cannot pickle 'Graph' object)"


@record
class EngineSentState:
    """TF state an engine fails to send to its workers (TFP101's and TFP102's facts)."""

    kind: Kind
    code: str  # the state's expression, cut to 30 characters
    engine: str  # its name: ENGINE_NOUNS and REMEDIES word it
    route: str
    failure: str  # crossing_failure()


def sent_state(analysis, crossing: Crossing, node, value: Value) -> EngineSentState | None:
    happens = crossing_failure(analysis, crossing, node, value)
    if happens is None:
        return None
    return EngineSentState(value.kind, analysis.code(node, 30), engine(crossing), str(crossing.route), happens)


def captured_globals(analysis, crossing: Crossing, body: cst.CSTNode, scope: Scope) -> tuple[cst.Name, Value] | None:
    """A module global that the task function reads and that holds TF state the engine cannot
    serialise: cloudpickle pickles a `__main__` function by value, with the globals it reads."""
    if not is_script(analysis, crossing):
        return None
    symbols = analysis.symbols
    for name in read_names(body):
        owner = symbols.resolving_scope(name.value, scope)
        if owner is None or owner.kind != "module":
            continue
        bindings = owner.bindings.get(name.value, [])
        if not bindings or any(b.kind in ("class", "import") for b in bindings):
            continue
        value = analysis.classifier.classify(name, scope, analysis.symbols.end_of_file)
        if any(b.kind == "def" for b in bindings) and value.kind is not Kind.TF_FUNCTION:
            continue
        if value.kind in STATE and crossing_failure(analysis, crossing, name, value) is not None:
            return name, value
    return None
