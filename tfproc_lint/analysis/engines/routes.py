"""EngineRoutes: the engine crossings of one module, through the engines of registry.py. A call
is first offered to each engine by name (its `call_crossings`); a method of an engine object
(typed by `object_type`) that sends a value or runs a function is read from knowledge.ENGINE_SENDS and
knowledge.ENGINE_TASK_METHODS, and its engine's `task_method` completes it.

Every engine serialises the task function and its arguments with cloudpickle and runs them in
worker processes that it started itself (never forked from the driver): so only what crosses
matters here, not the start method.
"""

from __future__ import annotations

from functools import cached_property

import libcst as cst

from tfproc_lint.analysis import engine_objects
from tfproc_lint.analysis.calls import CallIndex
from tfproc_lint.analysis.classifier import Classifier
from tfproc_lint.analysis.engines.core import MAX_DEPTH, engine_of_type, owner, route
from tfproc_lint.analysis.engines.registry import BY_NAME, ENGINES, OBJECT_NOUNS, ROUTES, TASK_DECORATORS
from tfproc_lint.analysis.routes import Crossing, Pickling, Sent
from tfproc_lint.analysis.symbols import CallSite, FunctionInfo, Scope, SymbolTable
from tfproc_lint.analysis.values import TaskCall
from tfproc_lint.knowledge import engines as knowledge


class EngineRoutes(*ROUTES):
    """The engine crossings of one module (none unless it imports an engine); each engine's own
    route methods come from its mixin (registry.ROUTES)."""

    def __init__(self, symbols: SymbolTable, classifier: Classifier, calls: CallIndex) -> None:
        self.symbols = symbols
        self.classifier = classifier
        self.calls = calls  # the module's call sites by the name they call

    @cached_property
    def active(self) -> bool:
        return bool(engine_objects.imported_engines(self))

    def crossings(self, site: CallSite) -> list[Crossing]:
        if not self.active:
            return []
        func = site.node.func
        name = engine_objects.engine_name(self, func, site.scope, site.order)
        for engine in ENGINES:
            found = engine.call_crossings(self, site, name)
            if found is not None:
                return found
        if isinstance(func, cst.Attribute):
            crossing = self._method(site, func)
            if crossing is not None:
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
            if engine_objects.engine_name(self, head, scope, self.symbols.end_of_file) in TASK_DECORATORS:
                return True
        return False

    # Methods of engine objects ----------------------------------------------------------------------
    def _method(self, site: CallSite, func: cst.Attribute) -> Crossing | None:
        call = site.node
        method = func.attr.value
        receiver = self.object_type(func.value, site.scope, site.order)
        if receiver is None:
            return None
        engine = engine_of_type(receiver)
        noun = OBJECT_NOUNS.get(receiver, receiver)
        if (receiver, method) in knowledge.ENGINE_SENDS and call.args:
            crossing = Crossing(route(f"{noun}.{method}()", method), call, site,
                                owner(engine, call, knowledge.ENGINE_SENDS[(receiver, method)], TaskCall.OBJECT_METHOD,
                                      method=method, receiver=func.value, receiver_type=receiver), Pickling.ALWAYS)
            crossing.sent.append(Sent(call.args[0].value, site.scope))
            return crossing
        task = knowledge.ENGINE_TASK_METHODS.get((receiver, method))
        if task is None:
            return None
        index, grain = task
        positional_args = [arg for arg in call.args if arg.keyword is None and not arg.star]
        if len(positional_args) <= index:
            return None
        task_owner = owner(engine, call, grain, TaskCall.OBJECT_METHOD, method=method, receiver=func.value,
                           receiver_type=receiver)
        crossing = Crossing(route(f"{noun}.{method}()", method), call, site, task_owner, Pickling.ALWAYS)
        crossing.callable, crossing.callable_scope = positional_args[index].value, site.scope
        return BY_NAME[engine].task_method(self, crossing, receiver, method, positional_args[index])

    def object_type(self, node, scope: Scope, order: int, depth: int = 0) -> str | None:
        """The engine object an expression evaluates to ("dask.client", "spark.rdd", ...)."""
        if depth > MAX_DEPTH:
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
            if name in knowledge.ENGINE_FACTORIES:
                return knowledge.ENGINE_FACTORIES[name]
            inner = self.object_type(node.value, scope, order, depth + 1)
            return _produces(inner, node.attr.value) if inner else None
        if isinstance(node, cst.Call):
            name = engine_objects.engine_name(self, node.func, scope, order)
            if name in knowledge.ENGINE_FACTORIES:
                return knowledge.ENGINE_FACTORIES[name]
            if isinstance(node.func, cst.Attribute):
                inner = self.object_type(node.func.value, scope, order, depth + 1)
                return _produces(inner, node.func.attr.value) if inner else None
        return None


def _produces(kind: str, member: str) -> str | None:
    return knowledge.ENGINE_PRODUCES.get((kind, member)) or knowledge.ENGINE_PRODUCES.get((kind, "*"))
