"""TF state a Ray task returns (`ray.get(f.remote(...))`): Ray pickles the result in the worker
with cloudpickle; a session, a graph or a Dataset does not pickle, and `ray.get` raises the error
wrapped in a RayTaskError (engine_knowledge.RAY_RETURN_ERRORS, measured). A Keras model comes back fine."""

from __future__ import annotations


from tfproc_lint.knowledge import engines as engine_knowledge
from tfproc_lint.analysis.engines import core
from tfproc_lint.analysis.kinds import Kind
from tfproc_lint.analysis.values import TaskCall
from tfproc_lint.analysis.walk import returns_in
from tfproc_lint.records import record


@record
class RayReturnedState:
    """TF state a Ray task returns that does not pickle (TFP101's and TFP102's facts)."""

    kind: Kind
    code: str  # the returned expression, cut to 30 characters
    task: str  # the task's callable, cut to 30 characters
    line: int  # of the call that submits it
    error: str  # what ray.get raises (measured)


def returned_state(analysis, crossing, kinds):
    """(node, RayReturnedState) for each return value of the Ray task this crossing submits whose kind is
    one of `kinds` and does not pickle."""
    if not core.is_engine(crossing) or core.engine(crossing) != "ray" or crossing.callable is None \
            or crossing.owner.task.call is not TaskCall.TASK:
        return
    function = core.task_worker(analysis, crossing).function
    if function is None:
        return
    for node in returns_in(function.node.body):
        if node.value is None:
            continue
        value = analysis.classifier.classify(node.value, function.scope, analysis.symbols.end_of_file)
        if value.kind in kinds and value.kind in engine_knowledge.RAY_RETURN_ERRORS:
            yield node.value, RayReturnedState(value.kind, analysis.code(node.value, 30),
                                               analysis.code(crossing.callable, 30), analysis.line_of(crossing.call),
                                               engine_knowledge.RAY_RETURN_ERRORS[value.kind])
