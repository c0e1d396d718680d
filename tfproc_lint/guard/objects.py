"""Find the TensorFlow object inside something sent to another process, and say what it is."""

from __future__ import annotations

import functools
import types

from tfproc_lint.knowledge.packages import KERAS_PACKAGES as KERAS_MODULES, RUNTIME_PACKAGES as TF_MODULES

# (package, class name) -> (code, what it is); a class's MRO is searched in order, so the most specific
# class wins. The package matters: a Keras functional model is also a `keras.src.ops.function.Function`
# and a `keras.src.ops.operation.Operation`, which are neither a tf.function nor a graph operation.
KINDS = {
    ("tensorflow", "BaseSession"): ("TFP101", "a tf.compat.v1.Session"),
    ("tensorflow", "MonitoredSession"): ("TFP101", "a tf.compat.v1.train.MonitoredSession"),
    ("tensorflow", "Graph"): ("TFP101", "a tf.Graph"),
    ("tensorflow", "SymbolicTensor"): ("TFP101", "a graph tensor"),
    ("tensorflow", "Operation"): ("TFP101", "a graph operation"),
    ("tensorflow", "QueueBase"): ("TFP101", "a TF1 queue"),
    ("tensorflow", "Saver"): ("TFP101", "a tf.compat.v1.train.Saver"),
    ("tensorflow", "Function"): ("TFP102", "a tf.function"),
    ("tensorflow", "ConcreteFunction"): ("TFP102", "a concrete tf.function"),
    ("tensorflow", "DatasetV2"): ("TFP102", "a tf.data.Dataset"),
    ("keras", "Model"): ("TFP102", "a Keras model"),
    ("keras", "Layer"): ("TFP102", "a Keras layer"),
    ("tensorflow", "_UserObject"): ("TFP102", "a loaded SavedModel"),  # what tf.saved_model.load returns
    ("tensorflow", "Module"): ("TFP102", "a tf.Module"),
    ("tensorflow", "AutoTrackable"): ("TFP102", "a trackable TensorFlow object"),
}
MAX_DEPTH = 7
MAX_ITEMS = 64  # per container: a task of a million rows is not walked through
MAX_NODES = 4000


class Found:
    def __init__(self, code: str, what: str, how: str, obj=None):
        self.obj = obj  # the TensorFlow object itself (None when only its pickled bytes were seen)
        self.code = code  # TFP101, TFP102, or TFP103 when reached through a bound method's object or a closure
        self.what = what  # "a tf.compat.v1.Session (tensorflow.python.client.session.Session)"
        self.how = how  # "", "held by the bound method's object", "captured by a closure"


def is_tensorflow(obj) -> bool:
    return (type(obj).__module__ or "").startswith(TF_MODULES)


def _package(module: str) -> str | None:
    """"tensorflow" for TensorFlow's classes, "keras" for Keras' (Keras 3 or tf_keras), else None."""
    top = module.partition(".")[0]
    if top in KERAS_MODULES:
        return "keras"
    return "tensorflow" if top == "tensorflow" else None


def kind(obj) -> tuple[str, str] | None:
    """(code, "a Keras model (keras.src.models.functional.Functional)") for a TensorFlow object of a
    known kind, else None."""
    cls = type(obj)
    for base in cls.__mro__:
        known = KINDS.get((_package(base.__module__ or ""), base.__name__))
        if known is not None:
            code, what = known
            return code, f"{what} ({cls.__module__}.{cls.__qualname__})"
    return None


def find(obj) -> Found | None:
    """The first TensorFlow object of a known kind in `obj` (breadth first), else the first TensorFlow
    object of any kind; None when there is none."""
    queue = [(obj, 0, "")]
    seen, fallback = set(), None
    while queue and len(seen) < MAX_NODES:
        item, depth, how = queue.pop(0)
        if id(item) in seen:
            continue
        seen.add(id(item))
        # A class of the program's own (a subclassed keras.Model, a tf.Module) counts by its known base.
        known = kind(item) if type(item).__module__ != "builtins" else None
        if known or is_tensorflow(item):
            code = "TFP103" if how else None
            if known:
                return Found(code or known[0], known[1], how, item)
            name = f"{type(item).__module__}.{type(item).__qualname__}"
            fallback = fallback or Found(code or "TFP102", f"a TensorFlow object ({name})", how, item)
            continue
        if depth >= MAX_DEPTH:
            continue
        queue.extend((child, depth + 1, child_how or how) for child, child_how in _children(item))
    return fallback


def _children(item):
    if isinstance(item, (str, bytes, bytearray, int, float, complex, bool, type(None), type, types.ModuleType)):
        return
    if isinstance(item, (tuple, list, set, frozenset)):
        for child in list(item)[:MAX_ITEMS]:
            yield child, ""
    elif isinstance(item, dict):
        for child in list(item.values())[:MAX_ITEMS]:
            yield child, ""
    elif isinstance(item, types.MethodType):
        yield item.__self__, "held by the object of the bound method sent as the worker"
    elif isinstance(item, functools.partial):
        yield item.func, ""
        yield item.args, ""
        yield item.keywords, ""
    elif isinstance(item, types.FunctionType):
        for cell in item.__closure__ or ():
            try:
                yield cell.cell_contents, "captured by the closure or lambda sent as the worker"
            except ValueError:  # an empty cell
                continue
    elif type(item).__module__ != "builtins" and not hasattr(item, "__array_interface__"):
        try:
            attributes = vars(item)
        except TypeError:
            return
        for child in list(attributes.values())[:MAX_ITEMS]:
            yield child, ""
