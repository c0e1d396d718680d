"""Where the model an engine task calls is kept (TFP303's engine tasks submitted one row at a time):
per worker (a global the worker loads once, an actor's or callable class's attribute, a Dask
WorkerPlugin's attribute of the worker), per call (a local of the task: TFP301's finding), or in the
driver (captured with the task function: TFP103's). Also the function a Ray actor method call runs.
"""

from __future__ import annotations

import libcst as cst

from tfproc_lint.analysis.kinds import STATE, Kind
from tfproc_lint.analysis.symbols import ClassInfo, FunctionInfo, Scope
from tfproc_lint.analysis.values import Value
from tfproc_lint.analysis.walk import iter_tree
from tfproc_lint.knowledge import engines as knowledge

_MODELS = (Kind.KERAS_MODEL, Kind.SAVED_MODEL, Kind.TF_FUNCTION, Kind.SESSION)


def per_worker(analysis, node: cst.BaseExpression, scope: Scope, function: FunctionInfo | None,
               fresh_globals: bool = False) -> bool:
    """The model `node` (a predict call's receiver, or the model called) is kept per worker process,
    not made on every call of the task nor captured from the driver. `fresh_globals`: the engine
    gives the task function new globals for every task (Dask, for a script's functions: measured),
    so a global the task loads lazily lasts one task."""
    if isinstance(node, cst.Attribute):
        head = node.value
        if isinstance(head, cst.Name) and function is not None and head.value == function.self_name:
            return True  # `self.model`: made once per actor (or callable class instance)
        return worker_attribute(analysis, node, scope) is not None
    if isinstance(node, cst.Call):
        callee = analysis.callee(node, analysis.site(node)) if analysis.site(node) is not None else None
        return not fresh_globals and callee is not None and bool(_declared_globals(callee))  # a lazy global
    if not isinstance(node, cst.Name):
        return False
    kept = _worker_attribute_of_local(analysis, node, scope)
    if kept is not None:
        return True  # `model = get_worker().model`
    owner = analysis.symbols.resolving_scope(node.value, scope)
    if owner is None or owner.kind != "module":
        return False  # a local of the task: built on every call (TFP301)
    bindings = owner.bindings.get(node.value, [])
    made_in_functions = [b for b in bindings if b.scope.kind == "function"]
    at_module = [b for b in bindings if b.scope.kind != "function"]
    if not made_in_functions or fresh_globals:
        return False  # the driver's model, pickled with the task (TFP103), or one loaded per task
    return all(b.kind == "assign" and _empty(b.value) for b in at_module)


def _empty(value) -> bool:
    return isinstance(value, cst.Name) and value.value == "None"


def _declared_globals(info: FunctionInfo) -> set[str]:
    return set(info.scope.global_names)


def worker_attribute(analysis, node: cst.Attribute, scope: Scope) -> Value | None:
    """`get_worker().model` (or `worker = get_worker()`, then `worker.model`) where a Dask
    WorkerPlugin's setup(worker) stores a model in `worker.model`: that model's value."""
    head = node.value
    order = analysis.symbols.end_of_file
    if isinstance(head, cst.Name):
        binding = analysis.symbols.assigned_call(head.value, scope, order)
        if binding is None:
            return None
        head, scope = binding.value, binding.scope
    if not isinstance(head, cst.Call) or analysis.classifier.qualified_name(head.func, scope, order) \
            not in knowledge.DASK_GET_WORKER:
        return None
    return plugin_worker_models(analysis).get(node.attr.value)


def plugin_worker_models(analysis) -> dict[str, Value]:
    """Attribute name -> model, for each `worker.<name> = <model>` in the setup(self, worker) of a
    WorkerPlugin subclass of this module."""
    found: dict[str, Value] = {}
    for klass in analysis.symbols.classes.values():
        if not _is_worker_plugin(analysis, klass):
            continue
        setup = analysis.find_method(klass, knowledge.DASK_PLUGIN_SETUP)
        params = setup.node.params.params if setup is not None else ()
        if len(params) < 2:
            continue
        worker = params[1].name.value
        for node in iter_tree(setup.node.body):
            if not isinstance(node, cst.Assign) or len(node.targets) != 1:
                continue
            target = node.targets[0].target
            if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) \
                    and target.value.value == worker:
                value = analysis.classifier.classify(node.value, setup.scope, analysis.symbols.end_of_file)
                if value.kind in STATE:
                    found[target.attr.value] = value
    return found


def _is_worker_plugin(analysis, klass: ClassInfo) -> bool:
    order = analysis.symbols.end_of_file
    return any(analysis.classifier.qualified_name(base.value, klass.outer, order) in knowledge.DASK_WORKER_PLUGINS
               for base in klass.node.bases)


def model_kind(analysis, node: cst.BaseExpression) -> Kind | None:
    """The model kind of `node`, also through a Dask WorkerPlugin's worker attribute."""
    kind = analysis.kind_of(node).kind
    if kind in _MODELS:
        return kind
    site = analysis.site_around(node)
    value = None
    if isinstance(node, cst.Attribute) and site is not None:
        value = worker_attribute(analysis, node, site.scope)
    elif isinstance(node, cst.Name) and site is not None:
        value = _worker_attribute_of_local(analysis, node, site.scope)
    return value.kind if value is not None and value.kind in _MODELS else None


def _worker_attribute_of_local(analysis, node: cst.Name, scope: Scope) -> Value | None:
    """A local bound once to a Dask worker attribute holding a model: `model = get_worker().model`."""
    bindings = analysis.symbols.bindings_at(node.value, scope, analysis.symbols.end_of_file)
    if len(bindings) != 1 or bindings[0].kind != "assign" or bindings[0].scope.kind != "function" \
            or not isinstance(bindings[0].value, cst.Attribute):
        return None
    return worker_attribute(analysis, bindings[0].value, bindings[0].scope)


def actor_method(analysis, crossing) -> FunctionInfo | None:
    """The method a Ray actor method call runs: `handle.score.remote(row)`, where `handle` is bound
    once to `Actor.remote(...)` of an actor class of this module."""
    func = crossing.call.func
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Attribute)):
        return None
    handle, method = func.value.value, func.value.attr.value
    site = crossing.site
    if not isinstance(handle, cst.Name):
        return None
    binding = analysis.symbols.assigned_call(handle.value, site.scope, site.order)
    if binding is None:
        return None
    made = binding.value
    if not (isinstance(made.func, cst.Attribute) and made.func.attr.value == knowledge.RAY_SUBMIT):
        return None
    target = made.func.value
    if isinstance(target, cst.Call) and isinstance(target.func, cst.Attribute):
        target = target.func.value  # Actor.options(...).remote()
    remote = analysis.engine_routes.ray_remote(target, binding.scope, binding.order)
    if remote is None or not isinstance(remote[0], ClassInfo):
        return None
    return analysis.find_method(remote[0], method)


def callable_class_call(analysis, crossing) -> FunctionInfo | None:
    """`ds.map_batches(Scorer, ...)`: the `__call__` of a callable class of this module, which
    ray.data makes once per actor and calls once per batch."""
    value = analysis.classifier.classify(crossing.callable, crossing.callable_scope, crossing.site.order)
    if value.kind is not Kind.CLASS or not isinstance(value.info, ClassInfo):
        return None
    return analysis.find_method(value.info, "__call__")
