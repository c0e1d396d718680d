"""Canonical qualified names: every spelling of one API maps to one name.

`tensorflow.compat.v1.Session`, `tensorflow.python.client.session.Session` -> `tensorflow.Session`;
`tensorflow.keras.models.load_model`, `tf_keras.models.load_model` -> `keras.models.load_model`;
`billiard.Pool`, `multiprocess.pool.Pool`, `torch.multiprocessing.Pool` -> `multiprocessing.Pool`.
"""

from __future__ import annotations

import functools

from tfproc_lint.knowledge import packages, processes

# Longest prefixes first; each maps a family of spellings onto one namespace.
_PREFIXES: tuple[tuple[str, str], ...] = (
    ("tensorflow.compat.v1.keras.", "keras."),
    ("tensorflow.compat.v2.keras.", "keras."),
    ("tensorflow.python.keras.", "keras."),
    ("tensorflow.keras.", "keras."),
    ("keras._tf_keras.keras.", "keras."),
    ("keras.src.", "keras."),
    ("keras.api.", "keras."),
    ("tf_keras.", "keras."),
    ("tensorflow._api.v2.compat.v1.", "tensorflow."),
    ("tensorflow._api.v2.", "tensorflow."),
    ("tensorflow.compat.v2.", "tensorflow."),
    ("torch.multiprocessing.", "multiprocessing."),
    ("multiprocess.", "multiprocessing."),
    ("billiard.", "multiprocessing."),
    ("concurrent.futures.process.", "concurrent.futures."),
    ("concurrent.futures.thread.", "concurrent.futures."),
)

# tf.compat.v1 mostly mirrors tf, except where the v1 function is a different API.
_V1_DIFFERENT = {"saved_model.load", "saved_model.loader.load"}

# Submodules of multiprocessing whose public names are re-exported at the top level.
_MP_SUBMODULES = ("pool.", "context.", "process.", "queues.", "connection.", "managers.")

# TensorFlow's internal module paths, as used inside TensorFlow and Keras themselves.
_INTERNAL = {
    "tensorflow.python.client.session.Session": "tensorflow.Session",
    "tensorflow.python.client.session.InteractiveSession": "tensorflow.InteractiveSession",
    "tensorflow.python.framework.ops.Graph": "tensorflow.Graph",
    "tensorflow.python.framework.ops.get_default_graph": "tensorflow.get_default_graph",
    "tensorflow.python.training.monitored_session.MonitoredSession": "tensorflow.train.MonitoredSession",
    "tensorflow.python.training.monitored_session.MonitoredTrainingSession":
        "tensorflow.train.MonitoredTrainingSession",
    "tensorflow.python.eager.def_function.function": "tensorflow.function",
    "tensorflow.python.eager.polymorphic_function.polymorphic_function.function": "tensorflow.function",
    "tensorflow.python.saved_model.load.load": "tensorflow.saved_model.load",
    "tensorflow.python.data.ops.dataset_ops.Dataset": "tensorflow.data.Dataset",
    "tensorflow.python.data.ops.dataset_ops.DatasetV2": "tensorflow.data.Dataset",
}


@functools.lru_cache(maxsize=4096)
def canonical(name: str | None) -> str | None:
    if not name:
        return name
    name = processes.PROCESS_ALIASES.get(name, name)
    for prefix, replacement in (*processes.PROCESS_PREFIX_ALIASES, *_PREFIXES):
        if name.startswith(prefix):
            name = replacement + name[len(prefix):]
            break
    if name.startswith("tensorflow.compat.v1."):
        rest = name[len("tensorflow.compat.v1."):]
        name = name if rest in _V1_DIFFERENT else "tensorflow." + rest
    if name.startswith("multiprocessing."):
        rest = name[len("multiprocessing."):]
        for sub in _MP_SUBMODULES:
            if rest.startswith(sub) and "." not in rest[len(sub):]:
                name = "multiprocessing." + rest[len(sub):]
                break
    for internal, public in _INTERNAL.items():
        if name == internal or name.startswith(internal + "."):
            return public + name[len(internal):]
    return name


def is_tensorflow(name: str | None) -> bool:
    return bool(name) and (name.split(".")[0] in packages.TENSORFLOW_PACKAGES)
