"""Hooks in multiprocessing (and its dill-based fork `multiprocess`): what crosses a process route,
how processes start, and what happens in forked and spawned children.

- pickling a task, a Process, a queue item or a Manager call fails on a TensorFlow object: the error
  names TFP101/102/103, the object and the route (in the parent, where it is raised anyway; a Queue's
  feeder thread only prints it, so the guard raises it in the main thread);
- a worker cannot unpickle what it was sent (a Keras layer it cannot rebuild, a function defined in a
  notebook cell): the worker would die and its pool wait forever, so it tells the parent (TFP102/204);
- spawned and forkserver children install the guard before they re-import the main module (a value
  in the preparation data that multiprocessing sends them, see children.py); one that starts processes
  while being imported fails with TFP202 (from any thread: Keras' data workers), a second
  set_start_method with TFP203;
- a child forked after the runtime started gets the traps of tfhooks.arm_fork_child (TFP201: through
  state.arm_fork_child, which install() sets);
- a TensorFlow object in a task (found by a search of the task's bytes, then a walk of the task): for
  pool workers forked after the start an error in the parent (`sent`), else counted (costs.crossed).
"""

from __future__ import annotations

import os
import re
import sys

from tfproc_lint.knowledge.packages import TENSORFLOW_MARKERS

from . import alarm, children, costs, errors, objects, state

GUARD_KEY = "tfproc_guard"  # unknown keys of the preparation data are ignored by multiprocessing
_last_loaded = None  # in a child forked after the runtime started: the last thing it unpickled
_loading = None  # ... and what it is unpickling now (a Keras model runs ops while rebuilt)
_start_method_set_at: str | None = None
_patched: set[str] = set()

# Frames of multiprocessing's own code on the stack of a failed pickling: the route it was taking.
ROUTES = (
    ("_handle_tasks", "a Pool task (map, apply, imap and friends)"),
    ("_launch", "a Process's target and arguments (start method spawn or forkserver)"),
    ("_callmethod", "a Manager proxy call"),
    ("_process_worker", "a ProcessPoolExecutor result"),
    ("_feed", "a multiprocessing Queue (put, pickled later in its feeder thread)"),
    ("worker", "a Pool worker's result"),
)


# The routes that carry one message per task: a TensorFlow object in each is sent again and again.
TASK_ROUTES = (ROUTES[0][1], "a ProcessPoolExecutor task (submit, map)", "a joblib.Parallel task (loky backend)")
# What a pickled TensorFlow or Keras object holds (its classes' modules): found by a C-speed search of the
# task's bytes, so that tasks of plain data cost no walk through the task. Two literal patterns: `re`
# searches a literal with memchr, an alternation byte by byte (measured: 6 us against 67 us for 4 KiB).
TF_MARKS = tuple(re.compile(re.escape(marker.encode())) for marker in TENSORFLOW_MARKERS)
# Above this size a task's bytes (large arrays) cost more to search (about 1.8 ms per MiB) than its
# objects to walk (objects.find stops at MAX_NODES and does not look into arrays): walk those directly.
SEARCH_MAX = 4 << 20


def route() -> str:
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_name
        for function, text in ROUTES:
            if name == function:
                if name == "_feed":
                    owner = getattr(frame.f_locals.get("onerror"), "__self__", None)
                    if type(owner).__name__ == "_SafeQueue":
                        return "a ProcessPoolExecutor task (submit, map)"
                return text
        frame = frame.f_back
    return "a multiprocessing connection (Queue, Pipe or SimpleQueue)"


def crossing_error(exc: BaseException, obj, where: str) -> errors.GuardError | None:
    """The guard's error for a pickling failure on `obj`, when TensorFlow is involved."""
    if isinstance(exc, errors.GuardError):
        return None
    found = objects.find(obj)
    if found is None:
        text = str(exc)
        if not any(mark in text for mark in ("'Graph'", "FuncGraph", "SymbolicTensor", "dtype variant")):
            return None
        found = objects.Found("TFP101" if "'Graph'" in text else "TFP102", "a TensorFlow object", "")
    how = f", {found.how}," if found.how else ""
    message = f"{found.what}{how} cannot be sent through {where}: {errors.described(exc)}"
    return errors.crossing_class(found.code, type(exc))(errors.text(found.code, message))


# Why the guard raised where the program may still have passed, and how to make it a warning.
STOPPED = ("the guard stopped the run so that it fails now instead of hanging later (to only warn: "
           f"python -m tfproc_lint.guard --warn, or {state.WARN_ENV}=1)")
LET_RUN = f"the guard only warns ({state.WARN_ENV} is set) and lets it run"


def fork_hazard(stop: bool) -> str:
    return ("this can hang: the runtime's thread pools do not survive the fork, so an op big enough to use them "
            f"waits forever (small ops run inline and may pass); {STOPPED if stop else LET_RUN}")


def fork_child_error(what: str, stop: bool = True) -> errors.GuardError:
    """TFP201 for a child forked after the parent's runtime started that now runs TensorFlow; TFP101/102/103
    when a TensorFlow object it received (task, Process arguments) is what it runs. `stop`: the error the
    guard raises (else the text of the warning it shows instead, TFPROC_GUARD_WARN)."""
    process = sys.modules.get("multiprocessing.process")
    current = process.current_process() if process else None
    sent = (_last_loaded, getattr(current, "_target", None), getattr(current, "_args", None),
            getattr(current, "_kwargs", None))
    found = objects.find(sent)
    if found is None and _loading is not None and any(m.encode() in bytes(_loading) for m in objects.TF_MODULES):
        how = _how_pickled(bytes(_loading))
        found = objects.Found("TFP103" if how else "TFP102", "a TensorFlow or Keras object, unpickled here,", how)
    base = (f"{what} ran in process {os.getpid()}, forked from process {state.forked_from} after "
            f"{state.start_text()}: {fork_hazard(stop)}")
    if found is not None and found.code == "TFP101" and "Session" not in found.what:
        found = None  # graph tensors and graphs reach forked children intact: the parent's start is the hazard
    if found is None:
        return errors.make("TFP201", base)
    how = f", {found.how}," if found.how else ""
    message = f"{found.what}{how} was sent to a forked worker and used there (TFP201 too): {base}"
    return errors.crossing_class(found.code, RuntimeError)(
        errors.text(found.code, message) + f" Fix for TFP201: {errors.FIXES['TFP201']}")


# How dill and cloudpickle spell a function rebuilt with its closure.
CLOSURE_MAKERS = ("_create_function", "_make_function", "_create_cell", "_make_cell", "_make_empty_cell")


def _how_pickled(data: bytes) -> str:
    """Whether what a worker is unpickling holds the object through a bound method or a closure (TFP103)."""
    import pickletools

    strings = []
    try:
        for opcode, arg, _ in pickletools.genops(data):
            if opcode.name == "GLOBAL":
                strings += str(arg).split(" ", 1)
            elif isinstance(arg, str):
                strings.append(arg)
    except Exception:  # noqa: BLE001 - a truncated or unusual pickle: no answer
        pass
    # A bound method pickles as getattr(obj, name), but so do parts of a Keras model: only closures
    # (rebuilt by dill and cloudpickle) are told apart here.
    if any(name in CLOSURE_MAKERS for name in strings):
        return "held by a bound method's object, a closure or a lambda sent to the worker"
    return ""


def patch(package) -> None:
    """Hook one multiprocessing package (`multiprocessing` or `multiprocess`) once."""
    name = package.__name__
    if name in _patched:
        return
    _patched.add(name)
    modules = {part: __import__(f"{name}.{part}", fromlist=["_"])
               for part in ("reduction", "queues", "spawn", "context", "process")}
    _patch_pickler(modules["reduction"], name)
    queue_cls = modules["queues"].Queue
    queue_cls._on_queue_feeder_error = staticmethod(_feeder_error(queue_cls._on_queue_feeder_error))
    spawn = modules["spawn"]
    original = spawn.get_preparation_data

    def get_preparation_data(*args, **kwargs):
        try:
            data = original(*args, **kwargs)
        except RuntimeError as exc:  # a spawned child starting processes while it re-imports the main module
            if isinstance(exc, errors.GuardError) or not children.starting_while_importing(exc):
                raise
            raise children.bootstrap_error(exc) from exc
        data[GUARD_KEY] = children.Bootstrap(os.getpid(), alarm.listening(), _importable_from())
        return data

    spawn.get_preparation_data = get_preparation_data
    context = modules["context"]
    for cls in (context.DefaultContext,):
        cls.set_start_method = _set_start_method(cls.set_start_method)
    package.set_start_method = context._default_context.set_start_method


def patch_joblib(joblib) -> None:
    """joblib's default (loky) backend pickles tasks in its own feeder thread and raises a bare
    `PicklingError: Could not pickle the task`: give it the guard's error as the cause it prints."""
    if "joblib" in _patched:
        return
    _patched.add("joblib")
    try:
        from joblib.externals.loky import process_executor
    except ImportError:
        return
    queue_cls = process_executor._SafeQueue
    original = queue_cls._on_queue_feeder_error

    def on_queue_feeder_error(self, e, obj):
        error = crossing_error(e, obj, "a joblib.Parallel task (loky backend)")
        if error is not None:
            error.__cause__ = e
        return original(self, error or e, obj)

    queue_cls._on_queue_feeder_error = on_queue_feeder_error
    try:
        from joblib.externals.loky.backend import queues
    except ImportError:
        return
    loky_dumps = queues.dumps

    def dumps(obj, *args, **kwargs):  # loky's feeder thread pickles each task with it (cloudpickle)
        data = loky_dumps(obj, *args, **kwargs)
        if type(obj).__name__ == "_CallItem":
            sent(obj, data, "a joblib.Parallel task (loky backend)")
        return data

    queues.dumps = dumps


def sent(obj, data, where: str | None = None) -> None:
    """`obj` was pickled into `data`, now on its way to another process. A TensorFlow object in a task:
    to pool workers forked after the runtime started it is an error (rebuilding it there runs ops, which
    hang: TFP102/103, TFP201 too), raised where the task is pickled, so the pool's caller gets it at once;
    to other workers, again and again, a warning (costs.crossed)."""
    if len(data) <= SEARCH_MAX and not any(mark.search(data) for mark in TF_MARKS):
        return
    where = where or route()
    if where not in TASK_ROUTES:
        return
    found = objects.find(obj)
    if found is None or found.code == "TFP101":  # graphs and sessions do not pickle: crossing_error names them
        return
    if _pool_forked_after_start():
        how = f", {found.how}," if found.how else ""
        stop = not state.warn_only()
        message = (f"{found.what}{how} is sent through {where} to pool workers forked after "
                   f"{state.start_text()}: rebuilding it there runs TensorFlow ops (TFP201 too), and the pool waits "
                   f"forever on a worker that hangs; {fork_hazard(stop)}")
        text = errors.text(found.code, message) + f" Fix for TFP201: {errors.FIXES['TFP201']}"
        if stop:
            raise errors.crossing_class(found.code, RuntimeError)(text)
        if "TFP201-sent" not in costs._warned:
            costs._warned.add("TFP201-sent")
            costs.show(text, costs.main_thread_frame())
        return
    costs.crossed(found, where, len(data))


def _pool_forked_after_start() -> bool:
    """Whether the Pool whose task is being pickled (its task thread's `pool`) has a worker that was
    forked after this process's runtime started (marked by before_fork)."""
    if state.started is None:
        return False
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_name != "_handle_tasks":
        frame = frame.f_back
    workers = frame.f_locals.get("pool") if frame is not None else None
    return any(getattr(getattr(w, "_popen", None), "_tfproc_after_start", False) for w in workers or ())


def before_fork() -> None:
    """In the parent, just before os.fork(): mark the multiprocessing Popen forking now (its `_launch`
    frame), when the runtime has started, so that tasks later sent to it can be checked."""
    if state.started is None:
        return
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_name != "_launch":
        frame = frame.f_back
    popen = frame.f_locals.get("self") if frame is not None else None
    if popen is not None and getattr(popen, "method", None) == "fork":
        try:
            popen._tfproc_after_start = True
        except AttributeError:
            pass


def _importable_from() -> str:
    """The folder that holds the tfproc_lint package (for a child whose sys.path lacks it)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _patch_pickler(reduction, package: str) -> None:
    pickler = reduction.ForkingPickler
    dumps, loads, dump = pickler.dumps.__func__, pickler.loads, reduction.dump

    def guarded_dumps(cls, obj, protocol=None, *args, **kwargs):
        try:
            data = dumps(cls, obj, protocol, *args, **kwargs)
        except Exception as exc:
            error = crossing_error(exc, obj, route())
            if error is None:
                raise
            raise error from exc
        if "tensorflow" in sys.modules or "keras" in sys.modules:
            sent(obj, data)
        return data

    def guarded_dump(obj, file, protocol=None, *args, **kwargs):
        try:
            return dump(obj, file, protocol, *args, **kwargs)
        except Exception as exc:
            error = crossing_error(exc, obj, route())
            if error is None:
                raise
            raise error from exc

    def guarded_loads(data, *args, **kwargs):
        global _last_loaded, _loading
        if state.forked_from:
            _loading = data if isinstance(data, (bytes, bytearray, memoryview)) else None
        try:
            result = loads(data, *args, **kwargs)
        except Exception as exc:
            if isinstance(exc, errors.GuardError) or not (state.parent_pid or state.forked_from):
                raise
            error = children.loading_error(exc)
            if error is None:
                raise
            alarm.tell(error)
            raise error from exc
        finally:
            _loading = None
        if state.forked_from:
            _last_loaded = result
        if costs.worker:
            costs.received(result)
        return result

    pickler.dumps = classmethod(guarded_dumps)
    pickler.loads = staticmethod(guarded_loads)
    reduction.dump = guarded_dump


def _feeder_error(original):
    def on_queue_feeder_error(e, obj):
        if not isinstance(e, errors.GuardError):
            return original(e, obj)
        # The item is dropped and its consumer would wait forever: make it an error in this process.
        print(f"tfproc-guard: {e}", file=sys.stderr, flush=True)
        if alarm.listening():
            alarm.send(os.getpid(), f"{e.code}\t{e}")
        else:
            alarm.tell(e)
    return on_queue_feeder_error


def _set_start_method(original):
    def set_start_method(self, method, force=False):
        global _start_method_set_at
        try:
            result = original(self, method, force)
        except RuntimeError as exc:
            if "already been set" not in str(exc):
                raise
            if children.importing_main:
                error = children.bootstrap_error(exc)
            else:
                here = state.where()
                first = f" (first set at {_start_method_set_at})" if _start_method_set_at else ""
                error = errors.make("TFP203", f"set_start_method({method!r}) at {here} after the start "
                                              f"method was set already{first}: {exc}", _library_fix(here))
            raise error from exc
        _start_method_set_at = _start_method_set_at or state.where()
        return result
    return set_start_method


def _library_fix(here: str) -> str | None:
    """The fix when the first call ran while another module was imported: it runs again in every
    spawned worker that imports that module, so only removing it there helps."""
    first = _start_method_set_at or ""
    if not first.endswith(" in <module>") or first.rpartition(":")[0] == here.rpartition(":")[0]:
        return None
    return (f"remove the call at {first.removesuffix(' in <module>')}, which runs whenever its module is imported "
            "(spawned workers import it again, so get_context(...) here does not help); a library should use "
            "multiprocessing.get_context(...) for its own pools")


def after_fork_child() -> None:
    global _last_loaded
    _last_loaded = None
    alarm.after_fork_child()
    state.parent_pid, state.parent_alarm = os.getppid(), alarm.listening()
    state.forked_from = None
    costs.after_fork_child()
    if state.started is None:
        return
    state.forked_from = state.parent_pid
    if state.arm_fork_child is not None:
        state.arm_fork_child(fork_child_error)
