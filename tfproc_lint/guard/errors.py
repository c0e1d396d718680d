"""The guard's errors and warnings: each names its rule code, what happened and the fix."""

from __future__ import annotations

import pickle

DOCS = "docs/rules/{code}.md"

FIXES = {
    "TFP101": "create the session or graph inside the worker (Pool(initializer=...)), and send it only "
              "plain data (numpy arrays, file paths)",
    "TFP102": "send a file path and load the model or rebuild the function once per worker "
              "(Pool(initializer=...)); send plain data (numpy arrays) instead of datasets",
    "TFP103": "give the worker a module-level function, and build the TensorFlow state inside the worker "
              "(Pool(initializer=...)), not in the object or closure it is sent with",
    "TFP201": "start the workers with the spawn or forkserver start method "
              "(multiprocessing.get_context(\"spawn\")), or fork them before the parent first uses TensorFlow",
    "TFP202": "put the code that starts processes under `if __name__ == \"__main__\":`",
    "TFP203": "set the start method once, at program start, or use multiprocessing.get_context(...) "
              "where the pool is made",
    "TFP204": "define the worker function (or the class of what it is sent, such as a keras.utils.PyDataset) in "
              "an importable module (a .py file next to the notebook) and import it",
    "TFP301": "build it once per worker, in the pool's initializer (Pool(initializer=..., initargs=(path,))) or "
              "cached in a module-level variable, and keep only the per-task work in the task",
    "TFP302": "give the pool an explicit worker count sized to the memory (Pool(2)), not one worker per CPU",
    "TFP303": "send chunks of rows (np.array_split(rows, n)) and call the model once per chunk",
    "TFP401": "turn on memory growth (tf.config.experimental.set_memory_growth(gpu, True) or "
              "TF_FORCE_GPU_ALLOW_GROWTH=true) or give each worker a memory limit or its own "
              "CUDA_VISIBLE_DEVICES, before its first TensorFlow op",
    "TFP402": "make the setting before the first TensorFlow op, session or device query; in workers, "
              "in the initializer of a spawn or forkserver pool",
    "TFP403": "set the variable before TensorFlow's runtime starts (before the first op), or in the "
              "environment of the worker processes",
}


def text(code: str, message: str, fix: str | None = None) -> str:
    """`TFPnnn: message. Fix: ... (see docs/rules/TFPnnn.md)`; `fix` replaces the rule's usual fix. A message
    that ends its own sentence (TensorFlow's "... cannot be modified after initialization.") gets no second
    full stop."""
    end = "" if message.endswith((".", "!", "?")) else "."
    return f"{code}: {message}{end} Fix: {fix or FIXES[code]} (tfproc-lint {DOCS.format(code=code)})"


class GuardError(Exception):
    """Raised by the guard where TensorFlow and multiprocessing would hang, or fail without the rule."""

    code = "TFP"

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class ForkAfterStartError(GuardError, RuntimeError):
    code = "TFP201"


class WorkerBootstrapError(GuardError, RuntimeError):
    code = "TFP202"


class StartMethodError(GuardError, RuntimeError):
    code = "TFP203"


class ConfigurationError(GuardError, RuntimeError):
    code = "TFP402"


class CrossingError(GuardError, RuntimeError):
    """An object that cannot travel to (or from) another process (TFP101-104, TFP204)."""

    code = "TFP102"


class GuardWarning(UserWarning):
    """TFP401, TFP403 and the costly patterns (TFP102/103 per task, TFP301-303): the program goes on, but a
    setting does nothing, a worker may run out of memory, or the work is slow or memory-hungry."""


_CLASSES = {cls.code: cls for cls in (ForkAfterStartError, WorkerBootstrapError, StartMethodError, ConfigurationError)}
_CROSSING = {}


def crossing_class(code: str, original: type[BaseException]) -> type[GuardError]:
    """A CrossingError that is also the original error's type when that is a plain built-in one
    (TypeError, AttributeError, pickle.PicklingError), so that `except TypeError:` still catches it."""
    base = original if original.__module__ == "builtins" or original is pickle.PicklingError else RuntimeError
    key = (code, base)
    if key not in _CROSSING:
        name = f"{code}{base.__name__}" if base is not RuntimeError else f"{code}Error"
        cls = type(name, (CrossingError, base), {"code": code, "__module__": __name__})
        _CROSSING[key] = globals()[name] = cls
    return _CROSSING[key]


def __getattr__(name: str):
    """Unpickling an error raised in another process: make its class here too (`TFP102TypeError`)."""
    import builtins
    import re

    match = re.fullmatch(r"(TFP\d{3})(\w+)", name)
    if not match:
        raise AttributeError(name)
    special = {"PicklingError": pickle.PicklingError, "Error": RuntimeError}
    base = special.get(match.group(2)) or getattr(builtins, match.group(2), None)
    if not (isinstance(base, type) and issubclass(base, BaseException)):
        raise AttributeError(name)
    return crossing_class(match.group(1), base)


def described(exc: BaseException, limit: int = 300) -> str:
    """`RuntimeError: its text`: the first paragraph of the message on one line (multiprocessing's
    bootstrapping error starts with a newline and breaks its sentence over lines), without its final
    full stop, cut at `limit` characters."""
    paragraph = []
    for line in str(exc).splitlines():
        if line.strip():
            paragraph.append(line.strip())
        elif paragraph:
            break
    text = " ".join(paragraph)
    text = text[:limit - 3] + "..." if len(text) > limit else text.removesuffix(".")
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def make(code: str, message: str, fix: str | None = None) -> GuardError:
    """An error of the code's class with the full text (message, fix, docs)."""
    cls = _CLASSES.get(code) or crossing_class(code, RuntimeError)
    return cls(text(code, message, fix))
