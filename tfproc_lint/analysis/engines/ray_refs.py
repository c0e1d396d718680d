"""Ray: one Keras model handed to many tasks, each of which deserializes its own copy.

Ray stores a task's argument (or a `ray.put` object) once, but every task that receives it
unpickles it again, and a Keras 3 model unpickles by loading the whole saved model (its
`__reduce__` saves it, `saving_lib._load_model_from_fileobj` loads it): 24 tasks over 2 workers
held 24 model objects (measured, Ray 2.60, Keras 3; the figures are in MODEL_PER_TASK).
An actor that builds the model in `__init__` holds one per actor.
"""

from __future__ import annotations


import libcst as cst

from tfproc_lint.analysis.engines import core
from tfproc_lint.analysis.kinds import Kind
from tfproc_lint.analysis.symbols import FunctionInfo, Scope
from tfproc_lint.analysis.values import TaskCall
from tfproc_lint.knowledge import engines as knowledge
from tfproc_lint.records import record

# Measured (runtime_probe/scenarios/tfp102_ray_put_model_*, ray.init(num_cpus=2)): a 1.3 million
# weight model (5 MB) through `ray.put` to 24 tasks: 24 copies, 16 tasks/s; two actors that build
# it once from its weights: 2 copies, 562 tasks/s. A task's returned model: the same, 24 copies.
MODEL_PER_TASK = (
    "each task unpickles its own copy, a full model load (24 tasks, 24 copies; a 5 MB model: 16 tasks/s, "
    "against 562 built once per actor)")
_TASK_CALLS = (TaskCall.TASK, TaskCall.ACTOR_METHOD)  # an actor's constructor runs once per actor


@record
class SharedModel:
    """A Keras model handed to a Ray task submitted in a loop (TFP102's facts; MODEL_PER_TASK: the cost)."""

    code: str  # the handed expression, cut to 30 characters
    how: str  # "a Keras model", "ray.put of a Keras model", ...
    route: str


def shared_models(analysis, crossing):
    """(node, SharedModel) for each Keras model that a Ray task submitted many times receives: the
    model itself, `ray.put(model)`'s ObjectRef, or the ObjectRef of a task that returns a model."""
    task = crossing.owner.task
    if task is None or task.engine != "ray" or task.call not in _TASK_CALLS:
        return
    if not core.many_tasks(analysis, crossing):
        return
    for sent in crossing.sent:
        how = _model_handed(analysis, sent.node, sent.scope, crossing.site.order)
        if how is None:
            continue
        yield sent.node, SharedModel(analysis.code(sent.node, 30), how, str(crossing.route))


def _model_handed(analysis, node, scope: Scope, order: int, depth: int = 0) -> str | None:
    """How `node` carries a Keras model to the task: "a Keras model", "ray.put of a Keras model",
    "ObjectRef of a task that returns a Keras model"; None otherwise."""
    if depth > 2:
        return None
    binding = analysis.symbols.assigned_call(node.value, scope, order) if isinstance(node, cst.Name) else None
    if binding is not None:
        return _model_handed(analysis, binding.value, binding.scope, binding.order, depth + 1)
    if analysis.classifier.classify(node, scope, order).kind is Kind.KERAS_MODEL:
        return "a Keras model"
    if not isinstance(node, cst.Call):
        return None
    if analysis.classifier.qualified_name(node.func, scope, order) == knowledge.RAY_PUT and node.args:
        if analysis.classifier.classify(node.args[0].value, scope, order).kind is Kind.KERAS_MODEL:
            return "ray.put of a Keras model"
        return None
    func = node.func
    if isinstance(func, cst.Attribute) and func.attr.value == knowledge.RAY_SUBMIT:
        target = func.value
        if isinstance(target, cst.Call) and isinstance(target.func, cst.Attribute) \
                and target.func.attr.value == knowledge.RAY_OPTIONS:
            target = target.func.value
        remote = analysis.engine_routes.ray_remote(target, scope, order)
        if remote is not None and isinstance(remote[0], FunctionInfo) \
                and core.returns_state(analysis, remote[0], None, {Kind.KERAS_MODEL}):
            return "the ObjectRef of a Ray task that returns a Keras model"
    return None
