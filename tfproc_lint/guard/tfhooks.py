"""Hooks in TensorFlow itself, set when the program imports it (see watch.py).

- where the runtime starts: the eager context's initialisation (first op, Keras, device queries that
  create devices), a TF1 Session's creation, device_lib's device listing;
- settings made after the start (TFP402): the eager context's thread, device and memory setters;
- in a child forked after the start (TFP201): every way to run an op or a session raises instead of
  perhaps hanging (`arm_fork_child`; TFPROC_GUARD_WARN makes it a warning);
- where the first TF1 graph is built (`tf.Graph`, also the default graph of the first placeholder or
  graph-mode op): TensorFlow starts a thread for graph building then, which a forked child does not
  get. A child forked after it (and before the runtime started) that starts the runtime, with a
  session or an op, gets a TFP201 warning first: this works almost always, and rarely hangs
  (GRAPH_FORK_RATE, measured by runtime_probe/fork_hazard.py), so the program goes on.
"""

from __future__ import annotations

import functools
import os
import sys

from tfproc_lint.knowledge.tensorflow import GRAPH_FORK_RATE

from . import alarm, costs, errors, gpu, state

CONTEXT = "tensorflow.python.eager.context"
SESSION = "tensorflow.python.client.session"
DEVICE_LIB = "tensorflow.python.client.device_lib"
PYWRAP_TFE = "tensorflow.python.pywrap_tfe"
# The eager context's setters behind tf.config's thread, device and memory settings (TFP402): the
# public functions are bound into tf.config's namespaces at import, the context's methods are not.
CONTEXT_SETTERS = ("set_visible_devices", "set_memory_growth", "set_logical_device_configuration")
CONTEXT_PROPERTIES = ("intra_op_parallelism_threads", "inter_op_parallelism_threads")
# What runs an op or a graph: the eager executors and the TF1 session's calls into C.
EXECUTORS = ("TFE_Py_FastPathExecute", "TFE_Py_Execute", "TFE_Py_ExecuteCancelable")
SESSION_RUNS = ("_call_tf_sessionrun", "_call_tf_sessionprun")
OPS = "tensorflow.python.framework.ops"

_patched = False
_let_run = False  # TFPROC_GUARD_WARN: this forked child warned once and now runs its ops


def patch() -> bool:
    """Patch the TensorFlow modules already imported; False when TensorFlow is not (fully) imported."""
    global _patched
    context, session = sys.modules.get(CONTEXT), sys.modules.get(SESSION)
    if _patched or context is None or session is None:
        return _patched
    _patched = True
    current = getattr(context, "_context", None)
    if current is not None and getattr(current, "_initialized", False):
        state.record("TensorFlow was used before the guard was installed", place="an unknown place")
    _patch_context(context.Context)
    _patch_session(session.BaseSession)
    _patch_graph(sys.modules.get(OPS))
    device_lib = sys.modules.get(DEVICE_LIB)
    if device_lib is None:
        from tensorflow.python.client import device_lib
    original = device_lib.list_local_devices

    @functools.wraps(original)
    def list_local_devices(*args, **kwargs):
        result = original(*args, **kwargs)
        state.record("device_lib.list_local_devices() created the devices", skip=1)
        return result

    device_lib.list_local_devices = list_local_devices
    return True


def _patch_context(cls) -> None:
    original = cls.ensure_initialized

    @functools.wraps(original)
    def ensure_initialized(self):
        if self._initialized:
            return
        warn_forked_after_graph("an op")
        original(self)
        if self._initialized and state.started is None:
            state.record("the eager context was initialised (first op, Keras model or device query)", skip=1)
            gpu.check_worker_memory(self)

    cls.ensure_initialized = ensure_initialized
    for name in CONTEXT_SETTERS:
        setattr(cls, name, _setter(getattr(cls, name), f"tf.config {name}()"))
    for name in CONTEXT_PROPERTIES:
        prop = getattr(cls, name)
        setattr(cls, name, property(prop.fget, _setter(prop.fset, f"tf.config.threading set_{name}()"), prop.fdel,
                                    prop.__doc__))


def _setter(original, label: str):
    @functools.wraps(original)
    def setter(*args, **kwargs):
        try:
            return original(*args, **kwargs)
        except RuntimeError as exc:
            if state.started is None:
                raise
            error = errors.make("TFP402", f"{label} after {state.start_text()}; TensorFlow refuses: "
                                          f"{errors.described(exc)}")
            if state.parent_pid:
                alarm.tell(error)
            raise error from exc

    return setter


def _patch_session(cls) -> None:
    original = cls.__init__

    @functools.wraps(original)
    def __init__(self, *args, **kwargs):
        warn_forked_after_graph("a tf.compat.v1.Session")
        original(self, *args, **kwargs)
        state.record("a tf.compat.v1.Session was created", skip=1)
        if costs.worker:
            costs.session_built(self)

    cls.__init__ = __init__


def _patch_graph(ops) -> None:
    if ops is None:
        from tensorflow.python.framework import ops
    original = ops.Graph.__init__

    @functools.wraps(original)
    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)
        if state.graph_built is None:
            state.record_graph("a TF1 graph was built", skip=1)

    ops.Graph.__init__ = __init__


def after_fork_child() -> None:
    """Note a fork after a TF1 graph was built, before the runtime started (then crossing's traps apply)."""
    forked = state.started is None and state.graph_built is not None
    state.forked_after_graph = os.getppid() if forked else None


def warn_forked_after_graph(what: str) -> None:
    """TFP201 as a warning: `what` is about to start the runtime in a child forked after a graph was built."""
    if not state.forked_after_graph or state.started is not None:
        return
    costs.warn("TFP201", (
        f"{what} starts TensorFlow's runtime in process {os.getpid()}, forked from process "
        f"{state.forked_after_graph} after {state.graph_built.describe()} there (no session or op had run): this "
        f"can hang, rarely ({GRAPH_FORK_RATE}; the thread TensorFlow started for graph building is not in this "
        "child); the program goes on"))


def arm_fork_child(make_error) -> None:
    """This process was forked after the runtime started: running TensorFlow here can hang (its thread
    pools' threads stayed in the parent; ops small enough to run inline pass), so every way to run an op or a
    graph raises `make_error(what)` (crossing.fork_child_error: TFP201, or what the child received); under
    TFPROC_GUARD_WARN the first one warns instead and the ops run (they can hang)."""
    global _let_run
    _let_run = False
    pywrap_tfe = sys.modules.get(PYWRAP_TFE)
    if pywrap_tfe is not None:
        for name in EXECUTORS:
            if hasattr(pywrap_tfe, name):
                setattr(pywrap_tfe, name, _trap(getattr(pywrap_tfe, name), "an op", make_error))
    session = sys.modules.get(SESSION)
    if session is not None:
        for name in SESSION_RUNS:
            setattr(session.BaseSession, name, _trap(getattr(session.BaseSession, name), "Session.run", make_error))
        callable_cls = session.BaseSession._Callable
        callable_cls.__call__ = _trap(callable_cls.__call__, "a Session callable", make_error)


def _trap(original, what: str, make_error):
    @functools.wraps(original)
    def trapped(*args, **kwargs):
        global _let_run
        if not _let_run:
            if not state.warn_only():
                error = make_error(what)
                alarm.tell(error)
                raise error
            _let_run = True  # TFPROC_GUARD_WARN: warn once in this process, then run every op as it comes
            costs.show(str(make_error(what, stop=False)))
        return original(*args, **kwargs)

    return trapped
