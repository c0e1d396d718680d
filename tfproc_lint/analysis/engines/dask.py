"""Dask: `dask.delayed` (called or as a decorator), a distributed Client's `submit`, `map`,
`scatter` and `run`, and the methods of bags, arrays and collections that run a function
(knowledge.ENGINE_SENDS, knowledge.ENGINE_TASK_METHODS). Dask pickles only under a distributed Client or for a
bag (its default schedulers run delayed functions, arrays and dataframes in threads); under a
Client its own Keras serializer moves models, and fails under Keras 3. Local clusters with worker
processes (TFP202) and a Keras model's bound method sent to many tasks (TFP103) are here too.
The knowledge is data in knowledge/engines.py.
"""

from __future__ import annotations

from functools import cached_property

import libcst as cst

from tfproc_lint.analysis import engine_objects
from tfproc_lint.analysis.engines.core import Engine, engine, many_tasks, owner, returns_state, route, task_worker
from tfproc_lint.analysis.kinds import Kind
from tfproc_lint.analysis.routes import Crossing, Pickling, Sent
from tfproc_lint.analysis.symbols import CallSite, FunctionInfo, Scope
from tfproc_lint.analysis.values import TaskCall, keyword
from tfproc_lint.analysis.walk import iter_tree, returns_in
from tfproc_lint.knowledge import engines as knowledge
from tfproc_lint.knowledge.engines import TaskGrain
from tfproc_lint.records import record

# The engine's hooks (core.Engine; ENGINE at the end) -------------------------------------------------
# client.submit / client.map keywords that configure the task rather than reach the function.
_TASK_OPTIONS = frozenset({"key", "workers", "resources", "retries", "priority", "allow_other_workers",
                           "pure", "fifo_timeout", "actor", "actors", "annotations", "batch_size"})


def call_crossings(routes, site: CallSite, name: str | None) -> list[Crossing] | None:
    """`dask.delayed(f)(x, y)` and the call of a function decorated with `@dask.delayed`; None when
    the call is neither."""
    call = site.node
    func = call.func
    if isinstance(func, cst.Call) and func.args:
        inner = engine_objects.engine_name(routes, func.func, site.scope, site.order)
        if inner in knowledge.DASK_DELAYED:  # dask.delayed(f)(x, y)
            crossing = Crossing(route("dask.delayed"), call, site, owner("dask", call, TaskGrain.ONE, TaskCall.DELAYED),
                                Pickling.ALWAYS)
            crossing.callable, crossing.callable_scope = func.args[0].value, site.scope
            crossing.sent.extend(Sent(arg.value, site.scope) for arg in call.args)
            return [crossing]
    info = routes.function_named(func, site.scope, site.order)  # a function decorated with @dask.delayed
    if info is not None and routes._delayed(info):
        crossing = Crossing(route("a @dask.delayed function"), call, site,
                            owner("dask", call, TaskGrain.ONE, TaskCall.DELAYED, function=info), Pickling.ALWAYS)
        crossing.callable, crossing.callable_scope = func, site.scope
        crossing.sent.extend(Sent(arg.value, site.scope) for arg in call.args)
        return [crossing]
    return None


def task_method(routes, crossing: Crossing, receiver: str, method: str, task: cst.Arg) -> Crossing | None:
    """`client.submit(f, x)` / `client.map(f, items)`: the other arguments reach the function (for
    `map`, the items of a display or comprehension), but the keywords that configure the task."""
    if receiver == "dask.client":
        for arg in crossing.call.args:
            if arg is task or (arg.keyword is not None and arg.keyword.value in _TASK_OPTIONS):
                continue
            routes._add_items(crossing, arg.value, crossing.site.scope,
                              per_item=method == "map" and arg.keyword is None)
    return crossing


def model_failure(crossing: Crossing) -> str | None:
    """What happens to a Keras model this crossing sends (None: it travels)."""
    if crossing.owner.task.method in knowledge.DASK_KERAS_BROKEN_SENDS:
        return ("Dask's own Keras serializer raises AttributeError ('_updated_config') under Keras 3, "
                "so the model never arrives")
    return None


# Routes (a mixin of EngineRoutes) -------------------------------------------------------------------
class DaskRoutes:
    def _delayed(self, info: FunctionInfo) -> bool:
        scope = info.scope.parent or info.scope
        for decorator in info.node.decorators:
            target = decorator.decorator
            head = target.func if isinstance(target, cst.Call) else target
            if engine_objects.engine_name(self, head, scope, self.symbols.end_of_file) in knowledge.DASK_DELAYED:
                return True
        return False

    @cached_property
    def makes_dask_client(self) -> bool:
        """The module makes or gets a distributed Client: Dask's scheduler then moves task results
        between processes with its own serializers."""
        return any(knowledge.ENGINE_FACTORIES.get(name or "") == "dask.client" for _, name in self.calls.resolved())

    def _add_items(self, crossing: Crossing, node, scope: Scope, per_item: bool) -> None:
        """An argument of a task; for `client.map`, the items of a display or comprehension."""
        if per_item and isinstance(node, (cst.List, cst.Tuple)):
            crossing.sent.extend(Sent(e.value, scope) for e in node.elements if not isinstance(e, cst.StarredElement))
        elif per_item and isinstance(node, (cst.ListComp, cst.GeneratorExp)):
            crossing.sent.append(Sent(node.elt, self.symbols.scope_of_node.get(node, scope)))
        elif not per_item:
            crossing.sent.append(Sent(node, scope))

    def has_initializer(self, client: cst.BaseExpression, site: CallSite) -> bool:
        """A Dask client on which the module registers a worker plugin or runs a function on every
        worker (`client.register_plugin(...)`, `client.run(init)`): Dask's initializers."""
        if not isinstance(client, cst.Name):
            return False
        for other in self.symbols.calls:
            func = other.node.func
            if isinstance(func, cst.Attribute) and func.attr.value in knowledge.DASK_INITIALIZERS \
                    and isinstance(func.value, cst.Name) and func.value.value == client.value \
                    and self.object_type(func.value, other.scope, other.order) == "dask.client":
                return True
        return False


# What the rules ask ---------------------------------------------------------------------------------
# Dask's default schedulers: threads in this process for delayed functions, arrays and dataframes (nothing
# is pickled), processes for bags; a distributed Client makes every collection run on its workers.
DASK_THREADED_OBJECTS = ("dask.collection", "dask.array")  # and dask.delayed (TaskCall.DELAYED)


def dask_pickles(analysis, crossing: Crossing) -> bool:
    """Whether Dask pickles what this crossing sends: under a distributed Client, or for a bag."""
    if analysis.engine_routes.makes_dask_client:
        return True
    task = crossing.owner.task
    return task.call is not TaskCall.DELAYED and task.receiver_type not in DASK_THREADED_OBJECTS


@record
class ReturnedModel:
    """A Keras model a Dask task returns under a distributed Client (TFP102's facts)."""

    code: str  # the returned expression, cut to 30 characters
    task: str  # the task's callable, cut to 30 characters
    line: int  # of the call that submits it


def returned_keras_models(analysis, crossing: Crossing):
    """(node, ReturnedModel) for each Keras model a Dask task function returns, when the module makes a
    distributed Client: Dask's own Keras serializer, which it prefers to pickle for a result,
    raises AttributeError ('_updated_config') under Keras 3 (measured)."""
    if engine(crossing) != "dask" or crossing.callable is None or not analysis.engine_routes.makes_dask_client:
        return
    function = task_worker(analysis, crossing).function
    if function is None:
        return
    for node in returns_in(function.node.body):
        if node.value is not None and returns_state(analysis, function, node.value, {Kind.KERAS_MODEL}):
            yield node.value, ReturnedModel(analysis.code(node.value, 30), analysis.code(crossing.callable, 30),
                                            analysis.line_of(crossing.call))


def dask_process_clusters(analysis) -> list[cst.Call]:
    """Calls that start a local Dask cluster with worker processes: `LocalCluster(...)`, or a
    `Client(...)` given no scheduler address (it makes a LocalCluster); not with
    `processes=False` (threads), nor when `processes=` is anything but a literal True."""
    found = []
    configured = None
    for site, name in analysis.calls.resolved():
        call = site.node
        if any(arg.star for arg in call.args):
            continue  # options from a dict: `processes` may be in it
        if name in knowledge.DASK_CLIENTS:
            if keyword(call, knowledge.DASK_CLIENT_ADDRESS_OPTION) is not None or any(
                    arg.keyword is None for arg in call.args):
                continue  # connects to a scheduler that exists (or a cluster made elsewhere)
            if configured is None:
                configured = names_dask_scheduler_address(analysis)
            if configured:
                continue  # Client() connects to the scheduler the configuration names
        elif name not in knowledge.DASK_LOCAL_CLUSTERS or sum(arg.keyword is None for arg in call.args) > 2:
            continue  # the third positional argument is `processes`
        processes = keyword(call, knowledge.DASK_CLUSTER_THREADS_OPTION)
        if processes is None or (isinstance(processes, cst.Name) and processes.value == "True"):
            found.append(call)
    return found


# Measured (Dask 2026.8, Keras 3, LocalCluster(processes=True)): the bound method's model is
# saved with every task and loaded again on the worker, once per task; a model subclass defined
# in the script fails to load there.
BOUND_MODEL_PER_TASK = (
    "Dask pickles the whole model into every task and each task loads its own copy on the worker (10 tasks, "
    "10 loads), which can cost more than the prediction for a large model (21 MB: 2 tasks/s, against 11 "
    "loading it once per worker); a model whose class is defined in the script does not load there at all "
    "(TypeError: Could not locate class)")


def bound_model_per_task(analysis, crossing: Crossing) -> cst.BaseExpression | None:
    """The Keras model whose bound method (`model.predict`) Dask pickles into many tasks:
    `client.map(model.predict, chunks)`, `client.submit` or `dask.delayed(model.predict)` in a loop."""
    callable_ = crossing.callable
    if engine(crossing) != "dask" or not isinstance(callable_, cst.Attribute):
        return None
    if not dask_pickles(analysis, crossing) or not many_tasks(analysis, crossing):
        return None
    value = analysis.classifier.classify(callable_.value, crossing.callable_scope, crossing.site.order)
    return callable_.value if value.kind is Kind.KERAS_MODEL else None


def names_dask_scheduler_address(analysis) -> bool:
    """Whether the module names Dask's `scheduler-address` setting (`dask.config.get(
    "scheduler-address")`, `dask.config.set(scheduler_address=...)`, DASK_SCHEDULER_ADDRESS): then
    its `Client()` given no address connects to that scheduler instead of making a local cluster."""
    for node in iter_tree(analysis.module):
        if isinstance(node, cst.SimpleString):
            if node.evaluated_value in knowledge.DASK_SCHEDULER_ADDRESS_STRINGS:
                return True
        elif isinstance(node, cst.Arg) and node.keyword is not None:
            if node.keyword.value == knowledge.DASK_SCHEDULER_ADDRESS_KEYWORD:
                return True
    return False


# A `@dask.delayed` function runs where it is called: no task declared beyond the crossings.
ENGINE = Engine(knowledge.DASK, task_decorators=knowledge.DASK_DELAYED,
                object_nouns={"dask.client": "Client", "dask.bag": "dask.bag", "dask.collection": "dask collection",
                              "dask.array": "dask array"},
                routes=DaskRoutes, call_crossings=call_crossings, task_method=task_method, pickles=dask_pickles,
                model_failure=model_failure)
