"""Process boundaries: the calls through which objects reach another process.

For every call site this finds the route (Pool.map, Process(args=), Queue.put, ...), the owner
(the pool, executor, process or queue, with the start method named where it was made), the
expressions sent and the worker callable. Thread pools are never routes.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from functools import cached_property

import libcst as cst

from tfproc_lint.analysis.classifier import Classifier
from tfproc_lint.analysis.kinds import Kind
from tfproc_lint.analysis.symbols import CallSite, Scope, SymbolTable
from tfproc_lint.analysis.values import Value, argument, keyword, positional
from tfproc_lint.knowledge import processes
from tfproc_lint.knowledge.processes import TaskData
from tfproc_lint.records import record

_ITERABLE_DISPLAYS = (cst.List, cst.Tuple, cst.ListComp, cst.GeneratorExp, cst.BinaryOperation)
ROUTE_METHODS = (set(processes.POOL_TASK_METHODS) | processes.QUEUE_PUT_METHODS | processes.PROXY_SENDING_METHODS
                 | processes.EXECUTOR_TASK_METHODS | {"send", "start"})
CONSTRUCTOR_NAMES = frozenset({"Pool", "Process", "ProcessPoolExecutor"})


class RouteKind(enum.Enum):
    """How objects reach another process. Each value is the template of the route's display text."""

    POOL_TASK = "Pool.{method}"  # map, imap, starmap, apply_async, ... (pathos: amap, pipe, ...)
    EXECUTOR_TASK = "ProcessPoolExecutor.{method}"  # submit, map
    INITARGS = "{receiver}(initargs=...)"  # Pool or ProcessPoolExecutor: initializer and initargs
    PROCESS_ARGS = "Process(args=...)"  # target, args, kwargs
    PROCESS_SUBCLASS = "{receiver}(...)"  # a Process subclass's constructor arguments
    QUEUE_PUT = "{receiver}.{method}"  # Queue or Manager Queue: put, put_nowait
    PROXY_CALL = "Manager proxy .{method}()"  # append, update, ...
    PROXY_STORE = "Manager proxy [...] ="
    CONNECTION_SEND = "Connection.send"
    JOBLIB = "joblib.Parallel"
    ENGINE = "{label}"  # Ray, Dask, Spark: in the engine's words ("a Ray task (.remote())", "rdd.map()")


class Pickling(enum.Enum):
    """When what crosses is pickled."""

    ALWAYS = "always"
    UNLESS_FORK = "unless-fork"  # a forked child inherits it (Process arguments, initargs)
    FEEDER_THREAD = "feeder-thread"  # later, by the queue's feeder thread: an error is printed, not raised


@record
class Route:
    """Which call sends: its kind, the method called and, where the text names it, the receiver."""

    kind: RouteKind
    method: str = ""  # "map", "apply_async", "submit", "put", "append", ...
    receiver: str = ""  # "Pool" or "ProcessPoolExecutor" (initargs), a Process subclass, "Manager Queue"
    label: str = ""  # an engine route's text

    @property
    def text(self) -> str:
        """For messages: "Pool.map", "Process(args=...)", "Manager Queue.put", ..."""
        return self.kind.value.format(method=self.method, receiver=self.receiver, label=self.label)

    def __str__(self) -> str:
        return self.text

    @property
    def is_pool_task(self) -> bool:
        return self.kind in (RouteKind.POOL_TASK, RouteKind.EXECUTOR_TASK)

    @property
    def submits_one_task(self) -> bool:
        """A pool's `apply`/`apply_async` or an executor's `submit`: one task per call."""
        return self.is_pool_task and self.method in processes.ONE_TASK_METHODS


@dataclass(eq=False)
class Sent:
    """An expression that crosses the boundary, with the scope its names resolve in."""

    node: cst.BaseExpression
    scope: Scope


@dataclass(eq=False)
class Crossing:
    route: Route  # e.g. Pool.map, Process(args=...), Queue.put
    call: cst.Call
    site: CallSite
    owner: Value
    pickled: Pickling
    sent: list[Sent] = field(default_factory=list)
    callable: cst.BaseExpression | None = None
    callable_scope: Scope | None = None


class RouteFinder:
    def __init__(self, symbols: SymbolTable, classifier: Classifier) -> None:
        self.symbols = symbols
        self.classifier = classifier

    def crossings(self, site: CallSite) -> list[Crossing]:
        call = site.node
        func = call.func
        if self._joblib and isinstance(func, (cst.Call, cst.Name)):
            crossing = self._parallel_route(site)
            if crossing is not None:
                return [crossing]
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        if not name:
            return []
        if name in ROUTE_METHODS and isinstance(func, cst.Attribute):
            crossing = self._method_route(site, func, name)
            return [crossing] if crossing else []
        if name not in CONSTRUCTOR_NAMES and not self._may_construct(func, site):
            return []
        value = self.classifier.classify(call, site.scope, site.order)
        if value.kind in (Kind.POOL, Kind.EXECUTOR, Kind.PROCESS) and value.origin is call:
            return self._constructor_routes(site, value)
        return []

    def store_crossing(self, site: CallSite) -> Crossing | None:
        """`shared[key] = value` on a Manager proxy: the value is pickled to the manager process."""
        statement = site.node
        for target in statement.targets:
            if isinstance(target.target, cst.Subscript):
                owner = self.classifier.classify(target.target.value, site.scope, site.order)
                if owner.kind is Kind.PROXY:
                    crossing = Crossing(Route(RouteKind.PROXY_STORE), statement, site, owner, Pickling.ALWAYS)
                    self._add_container_member(crossing, statement.value, site.scope, 0)
                    return crossing
        return None

    @cached_property
    def _joblib(self) -> bool:
        return any(name == "joblib" or name.startswith("joblib.") for name in self.symbols.imported_modules)

    def _parallel_route(self, site: CallSite) -> Crossing | None:
        """`Parallel(n_jobs=4)(delayed(f)(x, y) for x in xs)`: f is the worker, its arguments are sent."""
        call = site.node
        owner = self.classifier.classify(call.func, site.scope, site.order)
        if owner.kind is not Kind.PARALLEL or not call.args:
            return None
        crossing = Crossing(Route(RouteKind.JOBLIB), call, site, owner, Pickling.ALWAYS)
        tasks = call.args[0].value
        scope = site.scope
        if isinstance(tasks, (cst.GeneratorExp, cst.ListComp)):
            scope = self.symbols.scope_of_node.get(tasks, scope)
            tasks = tasks.elt
        elif isinstance(tasks, (cst.List, cst.Tuple)) and tasks.elements:
            tasks = tasks.elements[0].value
        if isinstance(tasks, cst.Call) and isinstance(tasks.func, cst.Call) and tasks.func.args:
            delayed = self.classifier.qualified_name(tasks.func.func, site.scope, site.order)
            if delayed == "joblib.delayed":
                self._set_callable(crossing, tasks.func.args[0].value, scope)
                for arg in tasks.args:
                    crossing.sent.append(Sent(arg.value, scope))
        return crossing

    def _may_construct(self, func: cst.BaseExpression, site: CallSite) -> bool:
        """An alias (`P = Pool`, `from multiprocessing import Pool as P`) or a local subclass."""
        if not isinstance(func, cst.Name):
            return False
        bindings = self.symbols.bindings_at(func.value, site.scope, site.order)
        return any(b.kind in ("import", "class")
                   or (b.kind == "assign" and isinstance(b.value, (cst.Name, cst.Attribute)))
                   for b in bindings)

    # constructors: Process(target, args, kwargs), Pool(initializer, initargs) ---------------------
    def _constructor_routes(self, site: CallSite, owner: Value) -> list[Crossing]:
        call = site.node
        if owner.kind is Kind.PROCESS:
            if owner.info is not None:  # a Process subclass: its constructor arguments
                crossing = Crossing(Route(RouteKind.PROCESS_SUBCLASS, receiver=owner.detail), call, site, owner,
                                    Pickling.UNLESS_FORK)
                for arg in call.args:
                    crossing.sent.append(Sent(arg.value, site.scope))
                return [crossing]
            crossing = Crossing(Route(RouteKind.PROCESS_ARGS), call, site, owner, Pickling.UNLESS_FORK)
            self._set_callable(crossing, argument(call, 1, "target"), site.scope)
            self._add_elements(crossing, argument(call, 3, "args"), site.scope)
            self._add_elements(crossing, argument(call, 4, "kwargs"), site.scope)
            return [crossing]
        initializer_index = 1 if owner.kind is Kind.POOL else 2
        route = Route(RouteKind.INITARGS, receiver="Pool" if owner.kind is Kind.POOL else "ProcessPoolExecutor")
        initializer = argument(call, initializer_index, "initializer")
        if initializer is None:
            return []
        crossing = Crossing(route, call, site, owner, Pickling.UNLESS_FORK)
        self._set_callable(crossing, initializer, site.scope)
        self._add_elements(crossing, argument(call, initializer_index + 1, "initargs"), site.scope)
        return [crossing]

    # methods: pool.map(...), executor.submit(...), queue.put(...), conn.send(...) ---------------
    def _method_route(self, site: CallSite, func: cst.Attribute, name: str) -> Crossing | None:
        call = site.node
        owner = self.classifier.classify(func.value, site.scope, site.order)
        kind = owner.kind
        if kind is Kind.POOL and name in processes.POOL_TASK_METHODS:
            method = processes.POOL_TASK_METHODS[name]
            callable_index, data_index, shape = method.callable_index, method.data_index, method.data
            crossing = Crossing(Route(RouteKind.POOL_TASK, name), call, site, owner, Pickling.ALWAYS)
            self._set_callable(crossing, argument(call, callable_index, "func"), site.scope)
            if shape is TaskData.ARGS:
                self._add_elements(crossing, argument(call, data_index, "args"), site.scope)
                self._add_elements(crossing, argument(call, data_index + 1, "kwds"), site.scope)
            elif shape is TaskData.STAR_ARGS:
                for arg in call.args[1:]:
                    crossing.sent.append(Sent(arg.value, site.scope))
            else:
                data = argument(call, data_index, "iterable")
                self._add_iterable(crossing, data, site.scope, starred=shape is TaskData.STAR_ITERABLE)
            return crossing
        if kind is Kind.EXECUTOR and name in processes.EXECUTOR_TASK_METHODS:
            crossing = Crossing(Route(RouteKind.EXECUTOR_TASK, name), call, site, owner, Pickling.ALWAYS)
            positional_args = [arg for arg in call.args if arg.keyword is None]
            if positional_args:
                self._set_callable(crossing, positional_args[0].value, site.scope)
            for arg in call.args[1:]:
                if name == "map" and arg.keyword is not None:
                    continue  # timeout=, chunksize=
                if name == "submit" or arg.keyword is None:
                    if name == "map":
                        self._add_iterable(crossing, arg.value, site.scope, starred=False)
                    else:
                        crossing.sent.append(Sent(arg.value, site.scope))
            return crossing
        if kind is Kind.QUEUE and name in processes.QUEUE_PUT_METHODS:
            proxy = owner.provenance.proxy
            simple = owner.detail.endswith("SimpleQueue")
            pickled = Pickling.ALWAYS if (proxy or simple) else Pickling.FEEDER_THREAD
            route = Route(RouteKind.QUEUE_PUT, name, "Manager Queue" if proxy else "Queue")
            crossing = Crossing(route, call, site, owner, pickled)
            self._add_container_member(crossing, argument(call, 0, "obj" if not proxy else "item"), site.scope, 0)
            return crossing
        if kind is Kind.PROXY and name in processes.PROXY_SENDING_METHODS:
            crossing = Crossing(Route(RouteKind.PROXY_CALL, name), call, site, owner, Pickling.ALWAYS)
            for arg in call.args:
                self._add_container_member(crossing, arg.value, site.scope, 0)
            return crossing
        if kind is Kind.CONNECTION and name == "send":
            crossing = Crossing(Route(RouteKind.CONNECTION_SEND, "send"), call, site, owner, Pickling.ALWAYS)
            self._add_value(crossing, argument(call, 0, "obj"), site.scope)
            return crossing
        return None

    # helpers ---------------------------------------------------------------------------------
    def _set_callable(self, crossing: Crossing, node, scope: Scope) -> None:
        if node is None:
            return
        # functools.partial(worker, state, ...): the worker is the callable, the rest is sent.
        if isinstance(node, cst.Name):  # `task = partial(worker, model)` then `pool.map(task, ...)`
            bindings = self.symbols.bindings_at(node.value, scope, crossing.site.order)
            if len(bindings) == 1 and bindings[0].kind == "assign" and isinstance(bindings[0].value, cst.Call):
                name = self.classifier.qualified_name(bindings[0].value.func, bindings[0].scope, bindings[0].order)
                if name == "functools.partial":
                    node, scope = bindings[0].value, bindings[0].scope
        if isinstance(node, cst.Call):
            name = self.classifier.qualified_name(node.func, scope, crossing.site.order)
            if name == "functools.partial" and node.args:
                crossing.callable, crossing.callable_scope = node.args[0].value, scope
                for arg in node.args[1:]:
                    crossing.sent.append(Sent(arg.value, scope))
                return
        crossing.callable, crossing.callable_scope = node, scope

    def _add_value(self, crossing: Crossing, node, scope: Scope) -> None:
        if node is not None:
            crossing.sent.append(Sent(node, scope))

    def _add_elements(self, crossing: Crossing, node, scope: Scope, depth: int = 0) -> None:
        """Elements of an args tuple / kwargs dict, looking into nested displays."""
        if node is None or depth > 3:
            return
        if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
            for element in node.elements:
                self._add_container_member(crossing, element.value, scope, depth)
        elif isinstance(node, cst.Dict):
            for element in node.elements:
                if isinstance(element, cst.DictElement):
                    self._add_container_member(crossing, element.value, scope, depth)
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "dict":
            for arg in node.args:
                self._add_container_member(crossing, arg.value, scope, depth)
        else:
            crossing.sent.append(Sent(node, scope))

    def _add_container_member(self, crossing, node, scope, depth) -> None:
        if isinstance(node, (cst.Tuple, cst.List, cst.Set, cst.Dict)):
            self._add_elements(crossing, node, scope, depth + 1)
        else:
            crossing.sent.append(Sent(node, scope))

    def _add_iterable(self, crossing: Crossing, node, scope: Scope, starred: bool, depth: int = 0) -> None:
        """What each task receives from an iterable argument of map/starmap."""
        if node is None or depth > 3:
            return
        add = self._add_elements if starred else self._add_container_member
        if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
            for element in node.elements:
                add(crossing, element.value, scope, depth)
        elif isinstance(node, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
            inner = self.symbols.scope_of_node.get(node, scope)
            add(crossing, node.elt, inner, depth)
        elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply):
            for side in (node.left, node.right):
                if isinstance(side, (cst.List, cst.Tuple)):
                    self._add_iterable(crossing, side, scope, starred, depth + 1)
        elif isinstance(node, cst.Call):
            name = self.classifier.qualified_name(node.func, scope, crossing.site.order)
            if name in ("itertools.repeat",) and node.args:
                add(crossing, node.args[0].value, scope, depth)
            elif name in ("zip", "itertools.product", "builtins.zip") or (
                isinstance(node.func, cst.Name) and node.func.value == "zip"
                and not self.symbols.bindings_at("zip", scope, crossing.site.order)
            ):
                for arg in node.args:
                    self._add_iterable(crossing, arg.value, scope, False, depth + 1)
        elif isinstance(node, cst.Name):
            # tasks = [(sess, x) for x in xs]; pool.starmap(f, tasks)
            bindings = self.symbols.bindings_at(node.value, scope, crossing.site.order)
            if len(bindings) == 1 and bindings[0].kind == "assign" and bindings[0].value is not None:
                binding = bindings[0]
                if isinstance(binding.value, _ITERABLE_DISPLAYS):
                    self._add_iterable(crossing, binding.value, binding.scope, starred, depth + 1)


def has_initializer(call: cst.Call, kind: Kind) -> bool:
    index = 1 if kind is Kind.POOL else 2
    node = argument(call, index, "initializer")
    return node is not None and not (isinstance(node, cst.Name) and node.value == "None")


def one_task_per_child(call: cst.Call, kind: Kind) -> bool:
    """`maxtasksperchild=1` / `max_tasks_per_child=1`: a deliberate process per task."""
    node = keyword(call, "maxtasksperchild") if kind is Kind.POOL else keyword(call, "max_tasks_per_child")
    if node is None and kind is Kind.POOL:
        node = positional(call, 3)
    return isinstance(node, cst.Integer) and node.evaluated_value == 1
