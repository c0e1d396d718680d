"""Ray: tasks and actors (`f.remote(...)`, `Actor.remote(...)`, `handle.m.remote(...)`), `ray.put`,
and ray.data's methods (knowledge.ENGINE_TASK_METHODS); actor handles kept in lists, loops and `self`
attributes or received as parameters. Ray Serve, models shared through ObjectRefs and state a task
returns are in ray_serve.py, ray_refs.py and ray_returns.py. The knowledge is data in knowledge/engines.py.
"""

from __future__ import annotations

import libcst as cst

from tfproc_lint.analysis import engine_objects
from tfproc_lint.analysis.engines.core import MAX_DEPTH, Engine, owner, route
from tfproc_lint.analysis.kinds import Kind
from tfproc_lint.analysis.routes import Crossing, Pickling, Sent
from tfproc_lint.analysis.symbols import CallSite, ClassInfo, FunctionInfo, Scope
from tfproc_lint.analysis.values import TaskCall, keyword
from tfproc_lint.knowledge import engines as knowledge
from tfproc_lint.knowledge.engines import TaskGrain


# The engine's hooks (core.Engine; ENGINE at the end) -------------------------------------------------
def call_crossings(routes, site: CallSite, name: str | None) -> list[Crossing] | None:
    """`.remote(...)` calls and `ray.put(x)`; None when the call is none of Ray's."""
    call = site.node
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value == knowledge.RAY_SUBMIT:
        crossing = routes._ray_submit(site, func)
        return [crossing] if crossing else []
    if name == knowledge.RAY_PUT and call.args:
        crossing = Crossing(route("ray.put", "put"), call, site, owner("ray", call, TaskGrain.ONE, TaskCall.PUT),
                            Pickling.ALWAYS)
        crossing.sent.append(Sent(call.args[0].value, site.scope))
        return [crossing]
    return None


def declared_tasks(analysis) -> set[FunctionInfo]:
    """Functions decorated with `@ray.remote` and the methods of `@ray.remote` classes: they run
    in Ray's workers wherever they are submitted."""
    routes = analysis.engine_routes
    found = set()
    for info in analysis.symbols.functions.values():
        klass = info.class_info
        if routes.ray_remote_options(info) is not False or (
                klass is not None and routes.ray_remote_options(klass) is not False):
            found.add(info)
    return found


# Routes (a mixin of EngineRoutes) -------------------------------------------------------------------
class RayRoutes:
    def ray_remote_options(self, info: FunctionInfo | ClassInfo) -> cst.Call | bool:
        """The `@ray.remote(...)` decorator call of a function or class, True for a bare
        `@ray.remote`, False when it is not a Ray task or actor."""
        scope = info.scope.parent if isinstance(info, FunctionInfo) else info.outer
        for decorator in info.node.decorators:
            target = decorator.decorator
            call = target if isinstance(target, cst.Call) else None
            name = engine_objects.engine_name(self, call.func if call else target, scope or info.scope,
                                              self.symbols.end_of_file)
            if name == knowledge.RAY_REMOTE:
                return call if call is not None else True
        return False

    def _ray_submit(self, site: CallSite, func: cst.Attribute) -> Crossing | None:
        """`f.remote(...)`, `f.options(...).remote(...)`, `Actor.remote(...)`, `actor.m.remote(...)`."""
        call = site.node
        target, options = func.value, None
        if isinstance(target, cst.Call) and isinstance(target.func, cst.Attribute) \
                and target.func.attr.value == knowledge.RAY_OPTIONS:
            options, target = target, target.func.value
        remote = self.ray_remote(target, site.scope, site.order)
        if remote is not None:
            info, decorator = remote
            actor = isinstance(info, ClassInfo)
            gpus = _num_gpus(options) or (_num_gpus(decorator) if isinstance(decorator, cst.Call) else None)
            label = "a Ray actor's constructor (.remote())" if actor else "a Ray task (.remote())"
            task_owner = owner("ray", call, TaskGrain.ONE, TaskCall.ACTOR if actor else TaskCall.TASK,
                               function=info, num_gpus=gpus)
            crossing = Crossing(route(label, "remote"), call, site, task_owner, Pickling.ALWAYS)
            crossing.callable, crossing.callable_scope = target, site.scope
        elif (imported := self.imported_ray_task(target, site.scope, site.order)) is not None:
            crossing = Crossing(route("a Ray task (.remote())", "remote"), call, site,
                                owner("ray", call, TaskGrain.ONE, TaskCall.TASK, imported=imported), Pickling.ALWAYS)
            crossing.callable, crossing.callable_scope = target, site.scope
        elif isinstance(target, cst.Attribute) and self._is_actor_handle(target.value, site.scope, site.order):
            crossing = Crossing(route("a Ray actor method (.remote())", "remote"), call, site,
                                owner("ray", call, TaskGrain.ONE, TaskCall.ACTOR_METHOD), Pickling.ALWAYS)
        elif "ray" in engine_objects.imported_engines(self) \
                and engine_objects.is_parameter(self, target, site.scope, site.order):
            # a remote function or actor class received as a parameter: its arguments cross alike
            crossing = Crossing(route("a Ray task or actor (.remote())", "remote"), call, site,
                                owner("ray", call, TaskGrain.ONE, TaskCall.ACTOR_METHOD), Pickling.ALWAYS)
        else:
            return None
        crossing.sent.extend(Sent(arg.value, site.scope) for arg in call.args)
        return crossing

    def ray_remote(self, node, scope: Scope, order: int, depth: int = 0):
        """(FunctionInfo or ClassInfo, decorator) when `node` is a Ray remote function or actor
        class: decorated with `ray.remote`, or `ray.remote(f)` / `ray.remote(num_gpus=1)(f)`."""
        if depth > MAX_DEPTH:
            return None
        value = self.classifier.classify(node, scope, order)
        if value.kind in (Kind.FUNCTION, Kind.CLASS) and value.info is not None:
            decorator = self.ray_remote_options(value.info)
            return (value.info, decorator) if decorator is not False else None
        wrapping = self._ray_remote_wrap(node, scope, order)
        if wrapping is not None:
            wrapped, binding, options = wrapping
            value = self.classifier.classify(wrapped, binding.scope, binding.order)
            if value.kind in (Kind.FUNCTION, Kind.CLASS) and value.info is not None:
                return value.info, options if options is not None else True
        return None

    def _ray_remote_wrap(self, node, scope: Scope, order: int):
        """(what is wrapped, the binding, the options call or None) for a name bound once to
        `ray.remote(f)` or `ray.remote(num_gpus=1)(f)`."""
        binding = self.symbols.assigned_call(node.value, scope, order) if isinstance(node, cst.Name) else None
        if binding is None:
            return None
        wrap = binding.value
        options = wrap.func if isinstance(wrap.func, cst.Call) else None
        head = options.func if options is not None else wrap.func
        if self.classifier.qualified_name(head, binding.scope, binding.order) != knowledge.RAY_REMOTE or not wrap.args:
            return None
        return wrap.args[0].value, binding, options

    def imported_ray_task(self, node, scope: Scope, order: int):
        """The facts of a function of another project module that `node` runs as a Ray task: one
        decorated with `@ray.remote` there, or wrapped here (`remote = ray.remote(score)`)."""
        project = self.classifier.project
        if project is None:
            return None
        facts = project.function(self.classifier.qualified_name(node, scope, order))
        if facts is not None:
            return facts if facts.ray_task else None
        wrapping = self._ray_remote_wrap(node, scope, order)
        if wrapping is None:
            return None
        wrapped, binding, _ = wrapping
        return project.function(self.classifier.qualified_name(wrapped, binding.scope, binding.order))

    def _is_actor_handle(self, node, scope: Scope, order: int) -> bool:
        """`handle = Actor.remote(...)` (or `Actor.options(...).remote(...)`), kept in a list, a
        loop variable or a `self` attribute, or received as a parameter."""
        return is_actor_handle(self, node, scope, order)


def _num_gpus(call: cst.Call | None) -> cst.BaseExpression | None:
    return keyword(call, knowledge.RAY_GPU_OPTION) if isinstance(call, cst.Call) else None


# Actor handles --------------------------------------------------------------------------------------
def is_actor_handle(routes, node, scope: Scope, order: int, depth: int = 0) -> bool:
    """`h` in `h.m.remote(...)` is a Ray actor handle: bound to `Actor.remote(...)`, a loop
    variable over handles, an element of a list of handles (`actors[i]`), a `self` attribute set
    to one, or a parameter in a module that imports Ray (only actor handles have `.m.remote`)."""
    if depth > MAX_DEPTH:
        return False
    if isinstance(node, cst.Name):
        bindings = routes.symbols.bindings_at(node.value, scope, order)
        if len(bindings) != 1 or bindings[0].value is None:
            return False
        binding = bindings[0]
        if binding.kind == "assign":
            return makes_actor(routes, binding.value, binding.scope, binding.order)
        if binding.kind == "for":
            return holds_actors(routes, binding.value, binding.scope, binding.order, depth + 1) \
                or _received(routes, binding.value, binding.scope, binding.order)
        return binding.kind == "param" and "ray" in engine_objects.imported_engines(routes)
    if isinstance(node, cst.Subscript):
        return holds_actors(routes, node.value, scope, order, depth + 1) or _received(routes, node.value, scope, order)
    if isinstance(node, cst.Attribute):
        values = _self_attribute(routes, node, scope, order)
        return bool(values) and all(makes_actor(routes, value, where, at) for value, where, at in values)
    return False


def _received(routes, node, scope: Scope, order: int) -> bool:
    """A parameter, in a module that imports Ray: `for h in handles: h.m.remote(...)`, `handles[i].m.remote(...)`."""
    return engine_objects.is_parameter(routes, node, scope, order) and "ray" in engine_objects.imported_engines(routes)


def makes_actor(routes, node, scope: Scope, order: int) -> bool:
    """`Actor.remote(...)` or `Actor.options(...).remote(...)` of a `@ray.remote` class."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
            and node.func.attr.value == knowledge.RAY_SUBMIT):
        return False
    target = node.func.value
    if isinstance(target, cst.Call) and isinstance(target.func, cst.Attribute) \
            and target.func.attr.value == knowledge.RAY_OPTIONS:
        target = target.func.value
    remote = routes.ray_remote(target, scope, order)
    return remote is not None and isinstance(remote[0], ClassInfo)


def holds_actors(routes, node, scope: Scope, order: int, depth: int = 0) -> bool:
    """A list or tuple display of actor handles, a comprehension making them, or a name or `self`
    attribute bound to one."""
    if depth > MAX_DEPTH:
        return False
    if isinstance(node, (cst.List, cst.Tuple)):
        return bool(node.elements) and all(
            not isinstance(e, cst.StarredElement) and makes_actor(routes, e.value, scope, order)
            for e in node.elements)
    if isinstance(node, (cst.ListComp, cst.GeneratorExp)):
        return makes_actor(routes, node.elt, routes.symbols.scope_of_node.get(node, scope), order)
    if isinstance(node, cst.Name):
        bindings = routes.symbols.bindings_at(node.value, scope, order)
        if len(bindings) == 1 and bindings[0].kind == "assign" and bindings[0].value is not None:
            binding = bindings[0]
            return holds_actors(routes, binding.value, binding.scope, binding.order, depth + 1)
        return False
    if isinstance(node, cst.Attribute):
        values = _self_attribute(routes, node, scope, order)
        return bool(values) and all(holds_actors(routes, value, where, at, depth + 1) for value, where, at in values)
    return False


def _self_attribute(routes, node: cst.Attribute, scope: Scope, order: int) -> list:
    """(value, scope, order) of each `self.x = value` made while the object is constructed."""
    owner_class = routes.classifier.instance_class(node.value, scope, order)
    if owner_class is None:
        return []
    bindings = routes.classifier.class_attributes(owner_class).get(node.attr.value, [])
    if any(b.value is None for b in bindings):
        return []
    return [(b.value, b.scope, b.order) for b in bindings]


# What the rules ask ---------------------------------------------------------------------------------
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


def is_function(info) -> bool:
    return isinstance(info, FunctionInfo)


# A method of a ray.data Dataset that runs a function adds nothing to its crossing; a Keras model
# travels to Ray's workers (each task loads its own copy: ray_refs.py).
ENGINE = Engine(knowledge.RAY, task_decorators=frozenset({knowledge.RAY_REMOTE}),
                object_nouns={"ray.dataset": "ray.data Dataset"}, routes=RayRoutes,
                call_crossings=call_crossings, declared_tasks=declared_tasks)
