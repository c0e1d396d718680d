"""What really happens when TensorFlow state meets a process boundary (runtime_probe confirms it).

The facts the rules word so that their messages say what the user will see, for the route and
start method at hand: a pickling error and where it is raised, a hang under fork, or a model
serialised per task.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tfproc_lint.analysis.kinds import Kind
from tfproc_lint.analysis.routes import Crossing, Pickling, RouteKind
from tfproc_lint.analysis.values import Pickler
from tfproc_lint.records import record

if TYPE_CHECKING:
    from tfproc_lint.analysis.file_analysis import FileAnalysis

PICKLE_ERRORS = {
    Kind.SESSION: "TypeError: cannot pickle",
    Kind.GRAPH: "TypeError: cannot pickle",
    Kind.TF_FUNCTION: "PicklingError",
    Kind.DATASET: "InvalidArgumentError on its variant tensor",
    Kind.SAVED_MODEL: "AttributeError: Can't pickle local object",
}

# What the other picklers raise (measured: runtime_probe scenarios tfp10x_joblib_*, tfp10x_multiprocess_*).
_PICKLER_ERRORS = {
    Pickler.CLOUDPICKLE: {kind: "PicklingError: Could not pickle the task" for kind in PICKLE_ERRORS},
    Pickler.DILL: {**PICKLE_ERRORS, Kind.TF_FUNCTION: "TypeError: cannot pickle 'FuncGraph'"},
}


def _pickle_error(kind: Kind, pickler: Pickler | None) -> str:
    return _PICKLER_ERRORS.get(pickler, PICKLE_ERRORS)[kind]


FORK_HANG = "the forked child inherits it and hangs on first use"
_RAISED_IN_THE_PARENT = frozenset({RouteKind.POOL_TASK, RouteKind.JOBLIB, RouteKind.PROXY_CALL, RouteKind.PROXY_STORE})
_RAISED_AT_START = frozenset({RouteKind.INITARGS, RouteKind.PROCESS_ARGS, RouteKind.PROCESS_SUBCLASS})
_TO_MANAGER = frozenset({RouteKind.PROXY_CALL, RouteKind.PROXY_STORE})
_BETWEEN_PROCESSES = frozenset({RouteKind.QUEUE_PUT, RouteKind.CONNECTION_SEND, *_TO_MANAGER})


def is_pickled(crossing: Crossing, method: str) -> bool:
    return crossing.pickled is not Pickling.UNLESS_FORK or method != "fork"


def where_raised(crossing: Crossing) -> str:
    kind = crossing.route.kind
    if crossing.owner.provenance.in_child:  # a queue or proxy the child was given
        return "in the child process"
    if kind in _RAISED_IN_THE_PARENT:
        return "in the parent"
    if kind is RouteKind.EXECUTOR_TASK:
        return "in .result()"
    if kind in _RAISED_AT_START:
        return "at start()"
    return f"in {crossing.route.method}()"  # put(), send()


def outcome(kind: Kind, crossing: Crossing, method: str) -> str | None:
    """The failure the user will observe, or None when the crossing is harmless."""
    if not is_pickled(crossing, method):
        if kind is Kind.GRAPH:
            return None  # a bare graph inherited by fork works as long as no session ran (TFP201)
        return FORK_HANG
    if kind is Kind.KERAS_MODEL:
        per_task = crossing.pickled is Pickling.ALWAYS and (
            crossing.route.is_pool_task or crossing.route.kind is RouteKind.JOBLIB)
        caveat = " (unregistered custom layers kill the worker and hang the pool)" \
            if crossing.route.kind is RouteKind.POOL_TASK else ""  # measured for multiprocessing pools
        return f"the whole model is pickled {'for every task' if per_task else 'into the worker'}{caveat}"
    error = _pickle_error(kind, crossing.owner.pickler)
    if crossing.pickled is Pickling.FEEDER_THREAD:
        return "the queue's feeder thread cannot pickle it: the error is printed, the item dropped, get() waits forever"
    return f"pickling fails ({error}) {where_raised(crossing)}"


_BUILT_IN_WORKER = {Kind.TF_FUNCTION: "create it inside the worker", Kind.DATASET: "build the dataset in the worker"}


def noun_of(kind: Kind) -> str:
    return {Kind.SESSION: "session", Kind.GRAPH: "graph", Kind.SAVED_MODEL: "SavedModel"}.get(kind, "model")


def remedy(crossing: Crossing, kind: Kind) -> str:
    route = crossing.route
    if route.kind in _BETWEEN_PROCESSES:
        return "send arrays; keep TensorFlow in one process"
    if kind in _BUILT_IN_WORKER:
        return f"send data; {_BUILT_IN_WORKER[kind]}"
    if route.kind is RouteKind.JOBLIB:
        return f"send data; load the {noun_of(kind)} inside the task function, cached per worker"
    noun = noun_of(kind)
    pool = {RouteKind.POOL_TASK: "Pool", RouteKind.EXECUTOR_TASK: "ProcessPoolExecutor"}.get(route.kind)
    if route.kind is RouteKind.INITARGS:
        pool = route.receiver
    if pool:
        return f"send data; build one {noun} per worker with {pool}(initializer=...)"
    return f"send data; build the {noun} in the worker"


def assumption(crossing: Crossing | None, method: str, why: str) -> str:
    """A note on the start method when the outcome depends on one the file does not name."""
    if why and (crossing is None or crossing.pickled is Pickling.UNLESS_FORK):
        return f" ({method} assumed: {why})"
    return ""


@record
class SentState:
    """TF state sent through a crossing, and what happens to it (TFP101's and TFP102's facts)."""

    kind: Kind
    code: str  # the state's expression, cut to 30 characters
    route: str
    to_manager: bool  # received by a Manager's server process, not by a worker
    happens: str  # outcome()
    remedy: str
    assumption: str  # the start method assumed, or ""


@record
class ModelToForkedManager:
    """A Keras model sent to a Manager whose server was forked after the parent started TensorFlow."""

    code: str
    route: str
    started_line: int  # the call that started the runtime
    assumption: str


def sent_state(analysis: "FileAnalysis", crossing: Crossing, node,
               kind: Kind) -> SentState | ModelToForkedManager | None:
    """What happens to TF state `node` sent through `crossing`, or None when that is harmless."""
    method, why = analysis.start_method(crossing.owner)
    if crossing.owner.provenance.proxy and kind is Kind.KERAS_MODEL:
        return _model_to_manager(analysis, crossing, node, method, why)
    happens = outcome(kind, crossing, method)
    if happens is None:
        return None
    return SentState(kind, analysis.code(node, 30), str(crossing.route), crossing.route.kind in _TO_MANAGER,
                     happens, remedy(crossing, kind), assumption(crossing, method, why))


def _model_to_manager(analysis: "FileAnalysis", crossing: Crossing, node, method: str,
                      why: str) -> ModelToForkedManager | None:
    """A Keras model pickles into a Manager's server process: one copy, which works, unless that
    server was forked after the parent started TensorFlow: then it hangs rebuilding the model."""
    manager = crossing.owner.provenance.manager
    started = analysis.execution.started_before(manager) if manager is not None else None
    if method != "fork" or started is None:
        return None
    return ModelToForkedManager(analysis.code(node, 30), str(crossing.route), analysis.line_of(started.call),
                                assumption(crossing, method, why))


def with_article(noun: str) -> str:
    """`pool` -> `a pool`, `executor` -> `an executor`, `os.fork() child` -> `an os.fork() child`."""
    return f"{'an' if noun[:1].lower() in 'aeio' else 'a'} {noun}"
