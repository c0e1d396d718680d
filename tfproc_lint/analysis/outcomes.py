"""What really happens when TensorFlow state meets a process boundary (runtime_probe confirms it).

Used to word messages so that they say what the user will see, for the route and start method
at hand: a pickling error and where it is raised, a hang under fork, or a model serialised per task.
"""

from __future__ import annotations

from tfproc_lint.analysis.routes import Crossing
from tfproc_lint.analysis.values import Kind

PICKLE_ERRORS = {
    Kind.SESSION: "TypeError: cannot pickle",
    Kind.GRAPH: "TypeError: cannot pickle",
    Kind.TF_FUNCTION: "PicklingError",
    Kind.DATASET: "InvalidArgumentError on its variant tensor",
    Kind.SAVED_MODEL: "AttributeError: Can't pickle local object",
}

FORK_HANG = "the forked child inherits it and hangs on first use (TF's thread pools do not survive fork)"


def is_pickled(crossing: Crossing, method: str) -> bool:
    return crossing.pickled in ("always", "feeder-thread") or (crossing.pickled == "unless-fork" and method != "fork")


def where_raised(crossing: Crossing) -> str:
    route = crossing.route
    if route.startswith("Pool."):
        return f"raised in the parent by {route}"
    if route.startswith("ProcessPoolExecutor."):
        return "raised in the parent by .result()"
    if "initargs" in route or route.startswith("Process(") or route.endswith("(...)"):
        return "raised in the parent by start()"
    return f"raised in the sender by {route.split('.')[-1]}()"


def outcome(kind: Kind, crossing: Crossing, method: str) -> str | None:
    """The failure the user will observe, or None when the crossing is harmless."""
    if not is_pickled(crossing, method):
        if kind is Kind.GRAPH:
            return None  # a bare graph inherited by fork works as long as no session ran (TFP201)
        return FORK_HANG
    if kind is Kind.KERAS_MODEL:
        if crossing.pickled == "always" and crossing.route.startswith(("Pool.", "ProcessPoolExecutor.")):
            text = "the whole model is pickled and rebuilt for every task"
        else:
            text = "the whole model is pickled and rebuilt in the worker"
        return text + "; a model with unregistered custom layers kills the worker and the pool never returns"
    error = PICKLE_ERRORS[kind]
    if crossing.pickled == "feeder-thread":
        return (f"the queue's feeder thread fails to pickle it ({error}), only prints the error and drops "
                "the item, so the consumer's get() waits forever")
    return f"pickling it fails ({error}), {where_raised(crossing)}"


def remedy(crossing: Crossing, noun: str) -> str:
    route = crossing.route
    if route.startswith("Pool"):
        return f"send data and build one {noun} per worker with Pool(initializer=...)"
    if route.startswith("ProcessPoolExecutor"):
        return f"send data and build one {noun} per worker with ProcessPoolExecutor(initializer=...)"
    if "Queue" in route or route.endswith("send"):
        return "send arrays or other plain data; keep TensorFlow in one process"
    return f"send data and build the {noun} inside the worker"


def assumption(crossing: Crossing, method: str, why: str) -> str:
    """A note on the start method when the outcome depends on it."""
    if crossing.pickled == "unless-fork":
        return f" (start method {method}: {why})"
    return ""
