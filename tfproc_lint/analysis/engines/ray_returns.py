"""TF state a Ray task returns (`ray.get(f.remote(...))`): Ray pickles the result in the worker
with cloudpickle; a session, a graph or a Dataset does not pickle, and `ray.get` raises the error
wrapped in a RayTaskError (engine_knowledge.RAY_RETURN_ERRORS, measured). A Keras model comes back fine."""

from __future__ import annotations

from tfproc_lint.knowledge import engines as engine_knowledge
from tfproc_lint.analysis.engines import core
from tfproc_lint.analysis.kinds import STATE_NOUNS
from tfproc_lint.analysis.values import TaskCall
from tfproc_lint.analysis.walk import returns_in


def returned_state(analysis, crossing, kinds):
    """(node, message) for each return value of the Ray task this crossing submits whose kind is
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
            yield node.value, (
                f"{STATE_NOUNS[value.kind]} `{analysis.code(node.value, 30)}` returned by a Ray task "
                f"(`{analysis.code(crossing.callable, 30)}`, line {analysis.line_of(crossing.call)}): Ray pickles "
                f"the result in the worker and ray.get raises {engine_knowledge.RAY_RETURN_ERRORS[value.kind]}; return "
                "data or a path and build it where it is used")
