"""The packages: which import names are TensorFlow's and which are process libraries', and the
words that show, in a file's text, that it may name one of them."""

from __future__ import annotations

# TensorFlow's runtime lives in these: TensorFlow itself, Keras 3 and Keras 2 (tf_keras). Their
# classes are the runtime state the guard finds; their import is what the project layer looks for.
RUNTIME_PACKAGES = ("tensorflow", "keras", "tf_keras")
KERAS_PACKAGES = ("keras", "tf_keras")
# A name under any of these is TensorFlow's (analysis/names.py: `is_tensorflow`): the runtime's
# packages and the libraries built on it.
TENSORFLOW_PACKAGES = ("tensorflow", "keras", "tensorflow_hub", "tensorflow_datasets", "tf_keras")
# multiprocessing's API under other names (`get_context`, `Pool`, `Process`): the spawn-context fix
# rewrites their pools; with concurrent.futures, the standard packages that start processes.
MULTIPROCESSING_PACKAGES = ("multiprocessing", "torch.multiprocessing", "multiprocess", "billiard")
PROCESS_PACKAGES = (*MULTIPROCESSING_PACKAGES, "concurrent.futures")
# The top-level packages whose calls at a module's top level may start processes or fix the start
# method (the project layer's import-time look, analysis/import_effects.py).
PROCESS_ROOTS = ("multiprocessing", "multiprocess", "billiard", "concurrent", "joblib", "loky", "pathos", "torch")
# Project dependencies on a GPU build of TensorFlow (config.py matches them with its own pattern).
GPU_DISTRIBUTIONS = ("tensorflow-gpu", "tensorflow[and-cuda]", "tf-nightly-gpu", "tf-nightly[and-cuda]")


def markers(names) -> tuple[str, ...]:
    """The fewest of `names` whose substrings find all of them in a text, in their order:
    ("tensorflow", "keras") for TENSORFLOW_PACKAGES (`tensorflow_hub` contains `tensorflow`)."""
    return tuple(name for name in names if not any(other != name and other in name for other in names))


# A file whose text has none of these names no TensorFlow package (the pre-filter, the batch
# runner and the project layer test these substrings first).
TENSORFLOW_MARKERS = markers(TENSORFLOW_PACKAGES)
