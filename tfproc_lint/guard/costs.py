"""Patterns that work but cost time or memory (TFP102/103 per task, TFP301, TFP302, TFP303): the guard
only warns (a GuardWarning naming the rule, printed once per rule and process) and never changes what
the program does or returns.

- TFP102/103: the same TensorFlow object (a Keras model, a bound method of an object holding one) is
  pickled into REPEATS or more tasks of a pool (Pool, ProcessPoolExecutor, joblib's loky): every task
  serialises it and every worker rebuilds it (seen in the parent, where the task is pickled);
- TFP301: a worker loads the same model file, or builds a Session over the same graph, again in a later
  task than the first time (one build per worker would serve every task);
- TFP302: a worker of a `Pool()` made without a worker count (one worker per CPU) builds or loads a
  model, so memory grows with the CPU count;
- TFP303: a worker runs its Keras model on one row at a time, once per task, ROW_CALLS times or more
  (in a Ray, Dask or Spark task: engine_workers.py).

The worker-side counters live only in worker processes (spawned by a guarded parent, or forked): the
parent's model calls are not wrapped. Thresholds favour a missed warning over a false one: each
fixed scenario of the runtime probe (initializer pools, chunked batches, a model per worker) stays
quiet, and each bad one crosses them by a wide margin (see the comments at each).
"""

from __future__ import annotations

import os
import sys
import warnings

from . import engine_workers, errors, state

# A task that holds the same TensorFlow object 3 times: one or two sends can be a deliberate hand-off
# (one task per worker); the probe's bad scenarios send it with each of 32-96 tasks.
REPEATS = 3
# One-row model calls in one worker before TFP303: the probe's fixed scenarios make at most 48 per
# worker (rows of another rule's pattern, or a warm-up), the row-per-task one about 500.
ROW_CALLS = 100
# ... and at most this many model calls per task item: a task that loops over rows (autoregressive
# decoding, a per-row RL step) calls the model many times per task and is not TFP303's pattern.
CALLS_PER_ITEM = 2
MAX_TRACKED = 256  # objects and builds remembered (a program that builds a new model per task)

worker = False  # this process is a worker (spawned by a guarded parent, or forked): set by crossing.py
tasks = 0  # task messages this worker received (a Pool task or chunk, an executor call)
items = 0  # ... and the task items in them (a Pool chunk of map() holds several)
_warned: set[str] = set()
_crossings: dict[int, int] = {}
_builds: dict[tuple, int] = {}  # what was built (file, graph) -> the task it was first built in
_trained = False  # a model was trained here: a task that trains what it builds is not TFP301
_one_row_calls = 0
_model_calls = 0
_call_depth = 0
_patched_keras = False


def warn(code: str, message: str, frame=None, fix: str | None = None) -> None:
    """Print the rule's warning once per process; never raise (not even under `-W error`). Its place:
    the user's line below `frame` (default: this thread's)."""
    if code in _warned:
        return
    _warned.add(code)
    text = errors.text(code, message, fix)
    engine_workers.report(text)
    show(text, frame)


def main_thread_frame():
    """Where the main thread waits (on a pool whose own thread pickles the tasks), outside threading's waits."""
    import threading

    main = sys._current_frames().get(threading.main_thread().ident)
    stdlib = os.path.dirname(threading.__file__)  # the pool's wait (threading's Condition, Event)
    while main is not None and main.f_back is not None and main.f_code.co_filename.startswith(stdlib):
        main = main.f_back
    return main


def show(text: str, frame=None) -> None:
    """Show `text` as a GuardWarning at the user's line below `frame` (default: this thread's); never raise."""
    frame = state.user_frame(frame=frame)
    try:
        warnings.warn_explicit(text, errors.GuardWarning, frame.f_code.co_filename, frame.f_lineno,
                               module=frame.f_globals.get("__name__"),
                               registry=frame.f_globals.setdefault("__warningregistry__", {}))
    except Warning:  # warnings turned into errors: the guard's warning must not change the program
        print(f"tfproc-guard: {text}", file=sys.stderr, flush=True)


# --- In the parent: the same TensorFlow object in every task (TFP102/103) ---------------------------
def crossed(found, where: str, size: int) -> None:
    """`found` (objects.Found) was pickled into a task sent through `where` (`size` bytes)."""
    if len(_crossings) >= MAX_TRACKED:
        _crossings.clear()
    key = id(found.obj)
    count = _crossings[key] = _crossings.get(key, 0) + 1
    if count < REPEATS:
        return
    how = f", {found.how}," if found.how else ""
    # Tasks are pickled in a pool's own thread: the place shown is where the main thread waits on the pool.
    main = main_thread_frame()
    warn(found.code, (
        f"{found.what}{how} is pickled into every task sent through {where}, {count} tasks so far, "
        f"{size / 1024:,.0f} KiB each: each task serialises it and the worker rebuilds it, so the tasks are "
        "slow (the program goes on)"), frame=main)


# --- In workers: builds (TFP301, TFP302) and one-row calls (TFP303) ---------------------------------
def received(obj) -> None:
    """A message this worker unpickled: count it when it is a task."""
    global tasks, items
    if type(obj) is tuple and len(obj) == 5 and type(obj[0]) is int:  # a Pool task: (job, i, func, args, kwds)
        tasks += 1
        func, args = obj[2], obj[3]
        if getattr(func, "__name__", "") in ("mapstar", "starmapstar") and type(args) is tuple and args:
            try:
                items += len(args[0][1])  # a chunk of map(): args == ((func, chunk),)
                return
            except (TypeError, IndexError, KeyError):
                pass
        items += 1
    elif type(obj).__name__ == "_CallItem":  # a ProcessPoolExecutor call
        tasks += 1
        items += 1


def built(identity: tuple | None, what: str) -> None:
    """This worker built or loaded TensorFlow state; `identity` (None: unknown) tells the same one apart."""
    if not worker:
        return
    _cpu_sized(what)
    if identity is None or _trained:
        return
    in_engine_task, message, fix = engine_workers.built(identity, what)
    if in_engine_task:
        if message:
            warn("TFP301", message, fix=fix)
        return
    if len(_builds) >= MAX_TRACKED:
        _builds.clear()
    first = _builds.setdefault(identity, tasks)
    if tasks > first:
        warn("TFP301", (
            f"worker process {os.getpid()} built {what} again in task {tasks} (first built in "
            f"{'its initializer' if first == 0 else f'task {first}'}): every task pays the whole build "
            "(the program goes on)"))


def _cpu_sized(what: str) -> None:
    process = sys.modules.get("multiprocessing.process")
    cpus = getattr(process.current_process(), "_tfproc_cpu_sized", None) if process else None
    if cpus:
        warn("TFP302", (
            f"worker process {os.getpid()} of a pool made without a worker count ({cpus} workers, one per "
            f"CPU) holds its own TensorFlow state ({what}): memory grows with the CPU count, not with the "
            "work (the program goes on)"))


def model_called(x) -> None:
    global _one_row_calls, _model_calls
    shape = getattr(x, "shape", None)
    try:
        one_row = shape is not None and len(shape) >= 1 and shape[0] == 1
    except TypeError:
        one_row = False
    in_engine_task, message, fix = engine_workers.model_called(one_row)
    if in_engine_task:
        if message:
            warn("TFP303", message, fix=fix)
        return
    _model_calls += 1
    if not one_row:
        return
    _one_row_calls += 1
    if (_one_row_calls >= ROW_CALLS and items and _one_row_calls <= CALLS_PER_ITEM * items
            and _one_row_calls * 10 >= _model_calls * 9):
        warn("TFP303", (
            f"worker process {os.getpid()} ran its Keras model on one row at a time {_one_row_calls} times, "
            f"about once per task ({items} tasks): each call pays the model's fixed cost for a single row "
            "(the program goes on)"))


def after_fork_child() -> None:
    """A forked child is a worker with counters of its own (the parent's were copied)."""
    global worker, tasks, items, _trained, _one_row_calls, _model_calls
    worker, tasks, items, _trained, _one_row_calls, _model_calls = True, 0, 0, False, 0, 0
    _warned.clear()
    _crossings.clear()
    _builds.clear()
    if "keras" in sys.modules:
        patch_keras()


def patch_pool(module) -> None:
    """TFP302: mark the workers of a `Pool()` made without a worker count (they learn it in the worker
    through their Process object, which spawn pickles and fork keeps)."""
    cls = getattr(module, "Pool", None)
    if cls is None or getattr(cls.__init__, "_tfproc_guard", False):
        return
    original = cls.__init__

    def __init__(self, processes=None, *args, **kwargs):
        if processes is None and type(self).Process is cls.Process:  # not ThreadPool, not a custom Process
            self.Process = _CpuSizedProcess(cls.Process)
        original(self, processes, *args, **kwargs)

    __init__._tfproc_guard = True
    cls.__init__ = __init__


class _CpuSizedProcess:
    def __init__(self, make):
        self.make = make

    def __call__(self, *args, **kwargs):
        process = self.make(*args, **kwargs)
        process._tfproc_cpu_sized = os.cpu_count() or 1
        return process


def patch_keras(_module=None) -> None:
    """In a worker: count model builds, loads, training and calls (Keras 3)."""
    global _patched_keras
    if _patched_keras or not worker:
        return
    try:
        from keras.src.legacy.saving import legacy_h5_format
        from keras.src.models.model import Model
        from keras.src.saving import saving_lib
    except Exception:  # noqa: BLE001 - another Keras: no TFP301-303 checks in this worker
        return
    _patched_keras = True
    for name in ("predict_on_batch", "predict", "__call__"):
        setattr(Model, name, _counted_call(getattr(Model, name)))
    for name in ("fit", "train_on_batch"):
        setattr(Model, name, _training(getattr(Model, name)))
    original_init = Model.__init__

    def __init__(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        if not _call_depth:
            built(None, f"a Keras model (built at {state.where()})")

    Model.__init__ = __init__
    saving_lib.load_model = _load(saving_lib.load_model)
    legacy_h5_format.load_model_from_hdf5 = _load(legacy_h5_format.load_model_from_hdf5)


def _counted_call(original):
    def call(self, *args, **kwargs):
        global _call_depth
        if _call_depth:
            return original(self, *args, **kwargs)
        model_called(args[0] if args else kwargs.get("x", kwargs.get("inputs")))
        _call_depth += 1
        try:
            return original(self, *args, **kwargs)
        finally:
            _call_depth -= 1

    return call


def _training(original):
    def train(self, *args, **kwargs):
        global _trained
        _trained = True
        return original(self, *args, **kwargs)

    return train


def _load(original):
    def load_model(filepath, *args, **kwargs):
        global _call_depth
        _call_depth += 1  # the models the load builds are not builds of their own
        try:
            model = original(filepath, *args, **kwargs)
        finally:
            _call_depth -= 1
        try:
            path = os.path.abspath(os.fspath(filepath))
            identity = ("file", path, os.stat(path).st_mtime_ns)
        except (TypeError, OSError):
            identity = None  # a file object or a path that is gone: no telling it is the same model
        built(identity, f"the Keras model {filepath!r} (load_model at {state.where()})")
        return model

    return load_model


def session_built(session) -> None:
    """A tf.compat.v1.Session was created in a worker: the same graph (GraphDef) built again is TFP301."""
    if not worker:
        return
    try:
        import hashlib

        graph_def = session.graph.as_graph_def().SerializeToString(deterministic=True)
        identity = ("session", hashlib.sha1(graph_def).hexdigest())  # noqa: S324 - not security
    except Exception:  # noqa: BLE001 - a check must never break the program
        identity = None
    built(identity, f"a tf.compat.v1.Session over the same graph (at {state.where()})")
