"""Distributed engines as process boundaries: Ray tasks and actors, Dask clients and collections,
Spark RDDs, DataFrames and UDFs.

Every engine serialises the task function and its arguments with cloudpickle and runs them in
worker processes that it started itself (never forked from the driver): so only what crosses
matters here, not the start method. The crossings found here have an owner of kind `Kind.ENGINE`
(never a pool owner: the start-method rules do not apply), `pickled=Pickling.ALWAYS`, and in `extra`
the engine ("ray", "dask", "spark"), how many times the callable runs ("one", "per-item",
"per-batch", "per-partition"), the method and, for Ray, the `num_gpus` node. The knowledge is
data in api.py; the rules word the engine's own fix.
"""

from __future__ import annotations

from functools import cached_property

import libcst as cst

from tfproc_lint.analysis import api, engine_objects
from tfproc_lint.analysis.classifier import Classifier
from tfproc_lint.analysis.kinds import STATE, STATE_NOUNS, Kind
from tfproc_lint.analysis.routes import Crossing, Pickling, Route, RouteKind, Sent
from tfproc_lint.analysis.symbols import CallSite, ClassInfo, FunctionInfo, Scope, SymbolTable
from tfproc_lint.analysis.values import Value, keyword
from tfproc_lint.analysis.walk import calls_in, iter_tree, read_names, returns_in
from tfproc_lint.analysis.workers import Worker, WorkerKind

ENGINE_NOUNS = {"ray": "Ray", "dask": "Dask", "spark": "Spark"}
_MAX_DEPTH = 8
_TASK_DECORATORS = api.SPARK_ROW_UDFS | api.SPARK_PANDAS_UDFS | api.DASK_DELAYED | {api.RAY_REMOTE}
# client.submit / client.map keywords that configure the task rather than reach the function.
_DASK_TASK_OPTIONS = frozenset({"key", "workers", "resources", "retries", "priority", "allow_other_workers",
                                "pure", "fifo_timeout", "actor", "actors", "annotations", "batch_size"})


class EngineRoutes:
    """The engine crossings of one module (none unless it imports an engine)."""

    def __init__(self, symbols: SymbolTable, classifier: Classifier) -> None:
        self.symbols = symbols
        self.classifier = classifier

    @cached_property
    def active(self) -> bool:
        return bool(engine_objects.imported_engines(self))

    @cached_property
    def _decorated_udfs(self) -> dict[cst.Call, FunctionInfo]:
        """`@udf("double")` / `@pandas_udf("double")` decorator calls -> the function they wrap."""
        found = {}
        for info in self.symbols.functions.values():
            for decorator in info.node.decorators:
                if isinstance(decorator.decorator, cst.Call):
                    found[decorator.decorator] = info
        return found

    @cached_property
    def _called_calls(self) -> set[int]:
        """Calls whose result is called at once: `pandas_udf(DoubleType())` in `pandas_udf(...)(f)`."""
        return {id(site.node.func) for site in self.symbols.calls if isinstance(site.node.func, cst.Call)}

    def _returns_curried(self, call: cst.Call) -> bool:
        return id(call) in self._called_calls

    def crossings(self, site: CallSite) -> list[Crossing]:
        if not self.active:
            return []
        call = site.node
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == api.RAY_SUBMIT:
            crossing = self._ray_submit(site, func)
            return [crossing] if crossing else []
        name = engine_objects.engine_name(self, func, site.scope, site.order)
        if name == api.RAY_PUT and call.args:
            owner = _owner("ray", call, "one", "put")
            crossing = Crossing(_route("ray.put", "put"), call, site, owner, Pickling.ALWAYS)
            crossing.sent.append(Sent(call.args[0].value, site.scope))
            return [crossing]
        if name in api.SPARK_ROW_UDFS | api.SPARK_PANDAS_UDFS:
            crossing = self._spark_udf(site, name)
            return [crossing] if crossing else []
        if name in api.SPARK_PREDICT_BATCH_UDFS and call.args:  # make_predict_fn: once per worker
            crossing = Crossing(_route("predict_batch_udf"), call, site, _owner("spark", call, "per-worker", "udf"),
                                Pickling.ALWAYS)
            crossing.callable, crossing.callable_scope = call.args[0].value, site.scope
            return [crossing]
        if isinstance(func, cst.Call) and func.args:
            inner = engine_objects.engine_name(self, func.func, site.scope, site.order)
            if inner in api.SPARK_ROW_UDFS | api.SPARK_PANDAS_UDFS and call.args:  # udf(DoubleType())(f)
                crossing = self._spark_udf(site, inner, func, call.args[0].value)
                return [crossing] if crossing else []
            if inner in api.DASK_DELAYED:  # dask.delayed(f)(x, y)
                crossing = Crossing(_route("dask.delayed"), call, site, _owner("dask", call, "one", "delayed"),
                                    Pickling.ALWAYS)
                crossing.callable, crossing.callable_scope = func.args[0].value, site.scope
                crossing.sent.extend(Sent(arg.value, site.scope) for arg in call.args)
                return [crossing]
        if isinstance(func, cst.Attribute):
            crossing = self._method(site, func)
            if crossing is not None:
                return [crossing]
        info = self.function_named(func, site.scope, site.order)  # a function decorated with @dask.delayed
        if info is not None and self._delayed(info):
            crossing = Crossing(_route("a @dask.delayed function"), call, site,
                                _owner("dask", call, "one", "delayed", info=info), Pickling.ALWAYS)
            crossing.callable, crossing.callable_scope = func, site.scope
            crossing.sent.extend(Sent(arg.value, site.scope) for arg in call.args)
            return [crossing]
        return []

    def function_named(self, node, scope: Scope, order: int) -> FunctionInfo | None:
        """The function of this module a bare name is bound to by its `def`, and to nothing else."""
        if not isinstance(node, cst.Name):
            return None
        bindings = self.symbols.bindings_at(node.value, scope, order)
        if len(bindings) != 1 or bindings[0].kind != "def":
            return None
        return self.symbols.functions.get(bindings[0].value)

    def _delayed(self, info: FunctionInfo) -> bool:
        scope = info.scope.parent or info.scope
        for decorator in info.node.decorators:
            target = decorator.decorator
            head = target.func if isinstance(target, cst.Call) else target
            if engine_objects.engine_name(self, head, scope, self.symbols.end_of_file) in api.DASK_DELAYED:
                return True
        return False

    @cached_property
    def makes_dask_client(self) -> bool:
        """The module makes or gets a distributed Client: Dask's scheduler then moves task results
        between processes with its own serializers."""
        return any(api.ENGINE_FACTORIES.get(self.classifier.qualified_name(site.node.func, site.scope, site.order)
                                            or "") == "dask.client" for site in self.symbols.calls)

    # Ray --------------------------------------------------------------------------------------------
    def ray_remote_options(self, info: FunctionInfo | ClassInfo) -> cst.Call | bool:
        """The `@ray.remote(...)` decorator call of a function or class, True for a bare
        `@ray.remote`, False when it is not a Ray task or actor."""
        scope = info.scope.parent if isinstance(info, FunctionInfo) else info.outer
        for decorator in info.node.decorators:
            target = decorator.decorator
            call = target if isinstance(target, cst.Call) else None
            name = engine_objects.engine_name(self, call.func if call else target, scope or info.scope,
                                              self.symbols.end_of_file)
            if name == api.RAY_REMOTE:
                return call if call is not None else True
        return False

    def wraps_as_task(self, info: FunctionInfo) -> bool:
        """Decorated with `@udf`, `@pandas_udf`, `@ray.remote` or `@dask.delayed` (bare or called):
        calling the function in the driver makes a column expression, a Ray error or a delayed
        task; its body runs in the engine's workers."""
        if not self.active:
            return False
        scope = info.scope.parent or info.scope
        for decorator in info.node.decorators:
            target = decorator.decorator
            head = target.func if isinstance(target, cst.Call) else target
            if engine_objects.engine_name(self, head, scope, self.symbols.end_of_file) in _TASK_DECORATORS:
                return True
        return False

    def _ray_submit(self, site: CallSite, func: cst.Attribute) -> Crossing | None:
        """`f.remote(...)`, `f.options(...).remote(...)`, `Actor.remote(...)`, `actor.m.remote(...)`."""
        call = site.node
        target, options = func.value, None
        if isinstance(target, cst.Call) and isinstance(target.func, cst.Attribute) \
                and target.func.attr.value == api.RAY_OPTIONS:
            options, target = target, target.func.value
        remote = self.ray_remote(target, site.scope, site.order)
        if remote is not None:
            info, decorator = remote
            actor = isinstance(info, ClassInfo)
            gpus = _num_gpus(options) or (_num_gpus(decorator) if isinstance(decorator, cst.Call) else None)
            route = _route("a Ray actor's constructor (.remote())" if actor else "a Ray task (.remote())", "remote")
            owner = _owner("ray", call, "one", "actor" if actor else "task", info=info, num_gpus=gpus)
            crossing = Crossing(route, call, site, owner, Pickling.ALWAYS)
            crossing.callable, crossing.callable_scope = target, site.scope
        elif (imported := self.imported_ray_task(target, site.scope, site.order)) is not None:
            route = _route("a Ray task (.remote())", "remote")
            crossing = Crossing(route, call, site, _owner("ray", call, "one", "task", imported=imported),
                                Pickling.ALWAYS)
            crossing.callable, crossing.callable_scope = target, site.scope
        elif isinstance(target, cst.Attribute) and self._is_actor_handle(target.value, site.scope, site.order):
            crossing = Crossing(_route("a Ray actor method (.remote())", "remote"), call, site,
                                _owner("ray", call, "one", "actor method"), Pickling.ALWAYS)
        elif "ray" in engine_objects.imported_engines(self) \
                and engine_objects.is_parameter(self, target, site.scope, site.order):
            # a remote function or actor class received as a parameter: its arguments cross alike
            crossing = Crossing(_route("a Ray task or actor (.remote())", "remote"), call, site,
                                _owner("ray", call, "one", "actor method"), Pickling.ALWAYS)
        else:
            return None
        crossing.sent.extend(Sent(arg.value, site.scope) for arg in call.args)
        return crossing

    def ray_remote(self, node, scope: Scope, order: int, depth: int = 0):
        """(FunctionInfo or ClassInfo, decorator) when `node` is a Ray remote function or actor
        class: decorated with `ray.remote`, or `ray.remote(f)` / `ray.remote(num_gpus=1)(f)`."""
        if depth > _MAX_DEPTH:
            return None
        value = self.classifier.classify(node, scope, order)
        if value.kind in (Kind.FUNCTION, Kind.CLASS) and value.info is not None:
            decorator = self.ray_remote_options(value.info)
            return (value.info, decorator) if decorator is not False else None
        if isinstance(node, cst.Name):
            bindings = self.symbols.bindings_at(node.value, scope, order)
            if len(bindings) == 1 and bindings[0].kind == "assign" and isinstance(bindings[0].value, cst.Call):
                wrap, binding = bindings[0].value, bindings[0]
                options = wrap.func if isinstance(wrap.func, cst.Call) else None
                head = options.func if options is not None else wrap.func
                if self.classifier.qualified_name(head, binding.scope, binding.order) == api.RAY_REMOTE and wrap.args:
                    wrapped = self.classifier.classify(wrap.args[0].value, binding.scope, binding.order)
                    if wrapped.kind in (Kind.FUNCTION, Kind.CLASS) and wrapped.info is not None:
                        return wrapped.info, options if options is not None else True
        return None

    def imported_ray_task(self, node, scope: Scope, order: int):
        """The facts of a function of another project module that `node` runs as a Ray task: one
        decorated with `@ray.remote` there, or wrapped here (`remote = ray.remote(score)`)."""
        project = self.classifier.project
        if project is None:
            return None
        facts = project.function(self.classifier.qualified_name(node, scope, order))
        if facts is not None:
            return facts if facts.ray_task else None
        if isinstance(node, cst.Name):
            bindings = self.symbols.bindings_at(node.value, scope, order)
            if len(bindings) == 1 and bindings[0].kind == "assign" and isinstance(bindings[0].value, cst.Call):
                wrap, binding = bindings[0].value, bindings[0]
                head = wrap.func.func if isinstance(wrap.func, cst.Call) else wrap.func
                if self.classifier.qualified_name(head, binding.scope, binding.order) == api.RAY_REMOTE and wrap.args:
                    wrapped = self.classifier.qualified_name(wrap.args[0].value, binding.scope, binding.order)
                    return project.function(wrapped)
        return None

    def _is_actor_handle(self, node, scope: Scope, order: int) -> bool:
        """`handle = Actor.remote(...)` (or `Actor.options(...).remote(...)`), kept in a list, a
        loop variable or a `self` attribute, or received as a parameter (engine_objects.py)."""
        return engine_objects.is_actor_handle(self, node, scope, order)

    # Dask, Spark, Ray Data: methods of engine objects -------------------------------------------------
    def _method(self, site: CallSite, func: cst.Attribute) -> Crossing | None:
        call = site.node
        method = func.attr.value
        receiver = self.object_type(func.value, site.scope, site.order)
        if receiver is None:
            return None
        engine = _engine_of_type(receiver)
        if (receiver, method) in api.ENGINE_SENDS and call.args:
            crossing = Crossing(_route(f"{_receiver_noun(receiver)}.{method}()", method), call, site,
                                _owner(engine, call, api.ENGINE_SENDS[(receiver, method)], method,
                                       receiver=func.value, receiver_type=receiver), Pickling.ALWAYS)
            crossing.sent.append(Sent(call.args[0].value, site.scope))
            return crossing
        task = api.ENGINE_TASK_METHODS.get((receiver, method))
        if task is None:
            return None
        index, tasks = task
        positional_args = [arg for arg in call.args if arg.keyword is None and not arg.star]
        if len(positional_args) <= index:
            return None
        owner = _owner(engine, call, tasks, method, receiver=func.value, receiver_type=receiver)
        route = _route(f"{_receiver_noun(receiver)}.{method}()", method)
        crossing = Crossing(route, call, site, owner, Pickling.ALWAYS)
        crossing.callable, crossing.callable_scope = positional_args[index].value, site.scope
        if (receiver, method) in api.SPARK_UDF_REGISTRATIONS and self._registers_wrapped_udf(crossing.callable, site):
            return None
        if receiver == "dask.client":
            for arg in call.args:
                if arg is positional_args[index] or (arg.keyword is not None
                                                     and arg.keyword.value in _DASK_TASK_OPTIONS):
                    continue
                self._add_items(crossing, arg.value, site.scope, per_item=method == "map" and arg.keyword is None)
        return crossing

    def _registers_wrapped_udf(self, node, site: CallSite) -> bool:
        """`spark.udf.register("f", g)` where `g` is not a plain function of this module (a
        `@udf` / `@pandas_udf` function, a `udf(...)` object): it runs as that wrapper says."""
        if isinstance(node, cst.Lambda):
            return False
        info = self.function_named(node, site.scope, site.order)
        return info is None or self.wraps_as_task(info)

    def _add_items(self, crossing: Crossing, node, scope: Scope, per_item: bool) -> None:
        """An argument of a task; for `client.map`, the items of a display or comprehension."""
        if per_item and isinstance(node, (cst.List, cst.Tuple)):
            crossing.sent.extend(Sent(e.value, scope) for e in node.elements if not isinstance(e, cst.StarredElement))
        elif per_item and isinstance(node, (cst.ListComp, cst.GeneratorExp)):
            crossing.sent.append(Sent(node.elt, self.symbols.scope_of_node.get(node, scope)))
        elif not per_item:
            crossing.sent.append(Sent(node, scope))

    def _spark_udf(self, site: CallSite, name: str, options: cst.Call | None = None,
                   wrapped: cst.BaseExpression | None = None) -> Crossing | None:
        """`udf(f, "double")`, `pandas_udf(f, "double")`, the decorator call `@udf("double")`, or
        `options`, a `udf(returnType)` call, applied to `wrapped`: `udf(DoubleType())(f)`."""
        call = site.node
        decorated = self._decorated_udfs.get(call) if options is None else None
        candidate = wrapped if options is not None else call.args[0].value if call.args else None
        if decorated is not None:
            function_node, info = decorated.node.name, decorated
            scope = decorated.scope.parent or site.scope
        elif isinstance(candidate, (cst.Name, cst.Attribute, cst.Lambda)):
            function_node, scope = candidate, site.scope
            value = self.classifier.classify(function_node, scope, site.order)
            if value.kind is not Kind.FUNCTION and not isinstance(candidate, cst.Lambda) \
                    and self._returns_curried(call):
                return None  # `pandas_udf(return_type)`: its result is called with the function
            info = value.info if value.kind is Kind.FUNCTION else None
        else:
            return None
        if name in api.SPARK_ROW_UDFS:
            tasks, route = "per-row", "a Spark udf"
        else:
            iterator = (info is not None and self._takes_iterator(info)) \
                or self._iterator_type(options if options is not None else call, site)
            tasks, route = ("per-partition", "an iterator pandas_udf") if iterator else ("per-batch", "a pandas_udf")
        crossing = Crossing(_route(route), call, site, _owner("spark", call, tasks, "udf", info=info), Pickling.ALWAYS)
        crossing.callable, crossing.callable_scope = function_node, scope
        return crossing

    def _iterator_type(self, call: cst.Call, site: CallSite) -> bool:
        """The pre-Spark-3 spelling: `pandas_udf(..., PandasUDFType.SCALAR_ITER)` (or MAP_ITER)."""
        for arg in call.args:
            name = self.classifier.qualified_name(arg.value, site.scope, site.order) or ""
            if name.startswith(api.SPARK_PANDAS_UDF_TYPES) and name.endswith(api.SPARK_ITERATOR_UDF_TYPES):
                return True
        return False

    def _takes_iterator(self, info: FunctionInfo) -> bool:
        """The first parameter is annotated `Iterator[...]` (pandas_udf's iterator form)."""
        params = info.node.params.params
        if not params or params[0].annotation is None:
            return False
        annotation = params[0].annotation.annotation
        if isinstance(annotation, cst.Subscript):
            annotation = annotation.value
        scope = info.scope.parent or info.scope
        return self.classifier.qualified_name(annotation, scope, info.order) in api.ITERATOR_TYPES

    def object_type(self, node, scope: Scope, order: int, depth: int = 0) -> str | None:
        """The engine object an expression evaluates to ("dask.client", "spark.rdd", ...)."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(node, cst.Name):
            bindings = self.symbols.bindings_at(node.value, scope, order)
            if len(bindings) == 1 and bindings[0].kind == "param":
                return engine_objects.parameter_type(self, bindings[0], depth + 1)
            if len(bindings) != 1 or bindings[0].kind not in ("assign", "with") or bindings[0].value is None:
                return None
            binding = bindings[0]
            return self.object_type(binding.value, binding.scope, binding.order, depth + 1)
        if isinstance(node, cst.Attribute):
            name = engine_objects.engine_name(self, node, scope, order)
            if name in api.ENGINE_FACTORIES:
                return api.ENGINE_FACTORIES[name]
            inner = self.object_type(node.value, scope, order, depth + 1)
            return _produces(inner, node.attr.value) if inner else None
        if isinstance(node, cst.Call):
            name = engine_objects.engine_name(self, node.func, scope, order)
            if name in api.ENGINE_FACTORIES:
                return api.ENGINE_FACTORIES[name]
            if isinstance(node.func, cst.Attribute):
                inner = self.object_type(node.func.value, scope, order, depth + 1)
                return _produces(inner, node.func.attr.value) if inner else None
        return None

    def has_initializer(self, client: cst.BaseExpression, site: CallSite) -> bool:
        """A Dask client on which the module registers a worker plugin or runs a function on every
        worker (`client.register_plugin(...)`, `client.run(init)`): Dask's initializers."""
        if not isinstance(client, cst.Name):
            return False
        for other in self.symbols.calls:
            func = other.node.func
            if isinstance(func, cst.Attribute) and func.attr.value in api.DASK_INITIALIZERS \
                    and isinstance(func.value, cst.Name) and func.value.value == client.value \
                    and self.object_type(func.value, other.scope, other.order) == "dask.client":
                return True
        return False


def _route(label: str, method: str = "") -> Route:
    return Route(RouteKind.ENGINE, method, label=label)


def _owner(engine: str, call: cst.Call, tasks: str, method: str, **extra) -> Value:
    return Value(Kind.ENGINE, origin=call, detail=engine,
                 extra={"pickler": "cloudpickle", "engine": engine, "tasks": tasks, "method": method, **extra})


def _num_gpus(call: cst.Call | None) -> cst.BaseExpression | None:
    return keyword(call, api.RAY_GPU_OPTION) if isinstance(call, cst.Call) else None


def _produces(kind: str, member: str) -> str | None:
    return api.ENGINE_PRODUCES.get((kind, member)) or api.ENGINE_PRODUCES.get((kind, "*"))


def _engine_of_type(kind: str) -> str:
    return kind.split(".")[0]


def _receiver_noun(kind: str) -> str:
    return {"dask.client": "Client", "dask.bag": "dask.bag", "dask.collection": "dask collection",
            "spark.rdd": "rdd", "spark.dataframe": "DataFrame", "spark.context": "SparkContext",
            "ray.dataset": "ray.data Dataset", "dask.array": "dask array"}.get(kind, kind)


# What the rules ask ---------------------------------------------------------------------------------
def is_engine(crossing: Crossing) -> bool:
    return crossing.owner.kind is Kind.ENGINE


def engine(crossing: Crossing) -> str:
    return crossing.owner.detail


def task_worker(analysis, crossing: Crossing):
    """The worker that runs the crossing's callable; for `ray.remote(f)` bound to a name, `f`."""
    worker = analysis.worker(crossing.callable, crossing.callable_scope, crossing.site.order)
    info = crossing.owner.extra.get("info")
    if worker.function is None and isinstance(info, FunctionInfo):
        return Worker(WorkerKind.FUNCTION, crossing.callable, crossing.callable_scope, info)
    imported = crossing.owner.extra.get("imported")
    if worker.imported is None and imported is not None:
        return Worker(WorkerKind.UNKNOWN, crossing.callable, crossing.callable_scope, imported=imported)
    return worker


def many_tasks(analysis, crossing: Crossing) -> bool:
    """The callable runs for many items, rows or batches, or is submitted in a loop."""
    tasks = crossing.owner.extra.get("tasks")
    if tasks in ("per-item", "per-row", "per-batch"):
        return True
    return tasks == "one" and bool(analysis.loops_around(crossing.call))


def is_script(analysis, crossing: Crossing) -> bool:
    """The engine pickles functions of this module by value (with the globals they read) only
    when the module is the driver's `__main__`: a script's `if __name__ == "__main__":` block, a
    notebook, or engine calls at module level."""
    return bool(analysis.notebook or analysis.symbols.main_guard_orders or crossing.site.scope.kind == "module")


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
        if any(function in workers for function in _enclosing_functions(site.scope)):
            continue  # runs in the engine's workers, not in the driver
        callee = analysis.classifier.classify(site.node.func, site.scope, site.order)
        if callee.kind is Kind.TF_FUNCTION and callee.origin is origin:
            return site.node
    return None


def worker_functions(analysis) -> set[FunctionInfo]:
    """Functions of this module that run in the engine's workers: task callables, Ray remote
    functions and the methods of Ray actor classes."""
    found = set()
    for crossing in analysis.crossings:
        if is_engine(crossing) and crossing.callable is not None:
            worker = task_worker(analysis, crossing)  # a decorated udf: the function it wraps
            if worker.function is not None:
                found.add(worker.function)
    routes = analysis.engine_routes
    if routes.active:
        for info in analysis.symbols.functions.values():
            klass = info.class_info
            if routes.ray_remote_options(info) is not False or (
                    klass is not None and routes.ray_remote_options(klass) is not False):
                found.add(info)
    return found


def spark_task_functions(analysis, near: cst.CSTNode) -> set[FunctionInfo]:
    """Functions of this module that Spark runs as tasks (partition functions, UDFs), given to
    Spark in the function (or module code) that holds `near`; a decorated UDF where it is defined."""
    found = set()
    where = analysis.enclosing_function_node(near)
    for crossing in analysis.crossings:
        if not is_engine(crossing) or engine(crossing) != "spark" or crossing.callable is None:
            continue
        worker = task_worker(analysis, crossing)
        if worker.function is None:
            continue
        made = analysis.enclosing_function_node(crossing.call)
        if made is worker.function.node:  # `@pandas_udf(...)`: the decorator sits on the function
            made = analysis.enclosing_function_node(made)
        if made is where:
            found.add(worker.function)
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
            if info in found or any(outer in found for outer in _enclosing_functions(info.scope.parent))}


def _enclosing_functions(scope: Scope | None) -> list[FunctionInfo]:
    found = []
    while scope is not None:
        if scope.kind == "function" and scope.function is not None:
            found.append(scope.function)
        scope = scope.parent
    return found


def crossing_failure(analysis, crossing: Crossing, node, value: Value, captured: bool = False) -> str | None:
    """What the engine raises for TF state `value` crossing, or None when it travels (a Keras
    model, a loaded SavedModel, an untraced tf.function)."""
    name = engine(crossing)
    if name == "dask" and not dask_pickles(analysis, crossing):
        return None
    if value.kind is Kind.KERAS_MODEL:
        if name == "dask" and crossing.owner.extra.get("method") in api.DASK_KERAS_BROKEN_SENDS:
            return ("Dask's own Keras serializer raises AttributeError ('_updated_config') under Keras 3, "
                    "so the model never arrives")
        return None
    if value.kind is Kind.SAVED_MODEL:
        return None
    if captured:
        error = api.ENGINE_CAPTURE_ERRORS[name]
    elif crossing.callable is not None or crossing.owner.extra.get("method") == "actor method":
        error = api.ENGINE_SERIALIZATION_ERRORS[name]  # a task's arguments
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


# Dask's default schedulers: threads in this process for delayed functions, arrays and dataframes (nothing
# is pickled), processes for bags; a distributed Client makes every collection run on its workers.
DASK_THREADED = ("delayed", "dask.collection", "dask.array")


def dask_pickles(analysis, crossing: Crossing) -> bool:
    """Whether Dask pickles what this crossing sends: under a distributed Client, or for a bag."""
    if analysis.engine_routes.makes_dask_client:
        return True
    extra = crossing.owner.extra
    return extra.get("method") not in DASK_THREADED and extra.get("receiver_type") not in DASK_THREADED


REMEDIES = {
    "ray": "send data or a path and build it inside the task, or once per actor in the __init__ of a "
           "@ray.remote class",
    "dask": "send data or a path and build it inside the task, or once per worker in a WorkerPlugin's setup() "
            "(client.register_plugin)",
    "spark": "send data or a path and build it inside the function, once per partition (rdd.mapPartitions, "
             "or an iterator pandas_udf)",
}
# Loading once per worker instead of once per task, in each engine's own terms (TFP301).
PER_WORKER_RECIPES = {
    "ray": "load it once per actor instead: a @ray.remote class that loads it in __init__ "
           "(with ray.data, map_batches given a callable class)",
    "dask": "load it once per worker instead: a WorkerPlugin whose setup() loads it, registered with "
            "client.register_plugin",
    "spark": "load it once per partition instead: an iterator pandas_udf (Iterator[pd.Series] -> "
             "Iterator[pd.Series]) or rdd.mapPartitions",
}


def sent_state_message(analysis, crossing: Crossing, node, value: Value) -> str | None:
    happens = crossing_failure(analysis, crossing, node, value)
    if happens is None:
        return None
    return (f"{STATE_NOUNS[value.kind]} `{analysis.code(node, 30)}` sent to {ENGINE_NOUNS[engine(crossing)]} "
            f"workers by {crossing.route}: {happens}; {REMEDIES[engine(crossing)]}")


def returned_keras_models(analysis, crossing: Crossing):
    """(node, message) for each Keras model a Dask task function returns, when the module makes a
    distributed Client: Dask's own Keras serializer, which it prefers to pickle for a result,
    raises AttributeError ('_updated_config') under Keras 3 (measured)."""
    if engine(crossing) != "dask" or crossing.callable is None or not analysis.engine_routes.makes_dask_client:
        return
    function = task_worker(analysis, crossing).function
    if function is None:
        return
    for node in returns_in(function.node.body):
        if node.value is not None and returns_state(analysis, function, node.value, {Kind.KERAS_MODEL}):
            yield node.value, (
                f"Keras model `{analysis.code(node.value, 30)}` returned by a Dask task "
                f"(`{analysis.code(crossing.callable, 30)}`, line {analysis.line_of(crossing.call)}): Dask's own "
                "Keras serializer fails on it under Keras 3 (AttributeError '_updated_config'), so the client "
                "gets TypeError: Could not serialize object; save the model in the task and return its path, "
                "or return model.get_weights()")


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


def ray_remotes(analysis) -> list[tuple[FunctionInfo | ClassInfo, cst.Call]]:
    """Functions and classes decorated with `@ray.remote(...)` (with options) in this module."""
    routes = analysis.engine_routes
    if not routes.active:
        return []
    found = []
    for info in [*analysis.symbols.functions.values(), *analysis.symbols.classes.values()]:
        decorator = routes.ray_remote_options(info)
        if isinstance(decorator, cst.Call):
            found.append((info, decorator))
    return found


def functions_of(analysis, info: FunctionInfo | ClassInfo) -> list[FunctionInfo]:
    """A Ray task's function, or the methods of an actor class."""
    if isinstance(info, FunctionInfo):
        return [info]
    return [function for function in analysis.symbols.functions.values() if function.class_info is info]


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


def is_function(info) -> bool:
    return isinstance(info, FunctionInfo)


def dask_process_clusters(analysis) -> list[cst.Call]:
    """Calls that start a local Dask cluster with worker processes: `LocalCluster(...)`, or a
    `Client(...)` given no scheduler address (it makes a LocalCluster); not with
    `processes=False` (threads), nor when `processes=` is anything but a literal True."""
    found = []
    configured = None
    for site in analysis.symbols.calls:
        call = site.node
        if any(arg.star for arg in call.args):
            continue  # options from a dict: `processes` may be in it
        name = analysis.classifier.qualified_name(call.func, site.scope, site.order)
        if name in api.DASK_CLIENTS:
            if keyword(call, api.DASK_CLIENT_ADDRESS_OPTION) is not None or any(
                    arg.keyword is None for arg in call.args):
                continue  # connects to a scheduler that exists (or a cluster made elsewhere)
            if configured is None:
                configured = names_dask_scheduler_address(analysis)
            if configured:
                continue  # Client() connects to the scheduler the configuration names
        elif name not in api.DASK_LOCAL_CLUSTERS or sum(arg.keyword is None for arg in call.args) > 2:
            continue  # the third positional argument is `processes`
        processes = keyword(call, api.DASK_CLUSTER_THREADS_OPTION)
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
            if node.evaluated_value in api.DASK_SCHEDULER_ADDRESS_STRINGS:
                return True
        elif isinstance(node, cst.Arg) and node.keyword is not None:
            if node.keyword.value == api.DASK_SCHEDULER_ADDRESS_KEYWORD:
                return True
    return False
