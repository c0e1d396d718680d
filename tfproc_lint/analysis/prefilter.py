"""Cheap text checks that skip files no rule can match, before LibCST parses anything.

Every finding needs, in one file: TensorFlow or Keras, a process module, and something that makes
a process pool, executor, process, queue or pipe (a call, a subclass, or an aliased import of one);
or TensorFlow or Keras and a setting the runtime reads once when it starts (TFP402, TFP403: a
`tf.config` call or an environment variable, which go wrong in a single process too).
Substring tests reject most files; two regular expressions confirm the rest. The checks only ever
let too much through, never too little (tests/test_prefilter.py). Kept free of libcst so that the
flake8 plugin can import it cheaply.
"""

from __future__ import annotations

import re

# Substring groups, rarest first: `in` is the fastest test Python has. "multiprocess" also covers
# `use_multiprocessing=` (Keras data workers), "fork" covers `os.fork()`.
_GROUPS = (("multiprocess", "concurrent", "billiard", "joblib", "loky", "pathos", "fork"), ("tensorflow", "keras"),
           ("Pool", "Process", "Queue", "Pipe", "get_context", "fork", "Parallel", "executor", "multiprocessing"))
_BYTE_GROUPS = tuple(tuple(marker.encode() for marker in group) for group in _GROUPS)
# The names of api.RUNTIME_CONFIGURATION and api.RUNTIME_ENVIRONMENT (tests/test_prefilter.py checks).
_SETTINGS = ("_parallelism_threads", "device_configuration", "set_memory_growth", "set_visible_devices",
             "CUDA_VISIBLE_DEVICES", "TF_FORCE_GPU_ALLOW_GROWTH", "TF_GPU_ALLOCATOR", "TF_NUM_INT")
_BYTE_SETTINGS = tuple(marker.encode() for marker in _SETTINGS)
# Confirmed by a call or an alias of a `tf.config` setter, or a variable next to `os.environ`/`putenv`.
_SETTING = re.compile(
    r"(?:_parallelism_threads|device_configuration|set_memory_growth|set_visible_devices)\s*\("
    r"|=\s*[\w.]*(?:_parallelism_threads|device_configuration|set_memory_growth|set_visible_devices)\b"
    r"|(?:CUDA_VISIBLE_DEVICES|TF_FORCE_GPU_ALLOW_GROWTH|TF_GPU_ALLOCATOR|TF_NUM_INT)[\s\S]*?(?:environ|putenv)"
    r"|(?:environ|putenv)[\s\S]*?(?:CUDA_VISIBLE_DEVICES|TF_FORCE_GPU_ALLOW_GROWTH|TF_GPU_ALLOCATOR|TF_NUM_INT)"
)

_PROCESS_MODULE = re.compile(
    r"\b(?:multiprocess(?:ing)?|concurrent\.futures|billiard|joblib|loky|pathos)\b|from\s+concurrent\s+import"
    r"|\bfork\s*\(|\buse_multiprocessing\b"
)
_MAKER = re.compile(
    r"\b(?:Pool|Process|ProcessPoolExecutor|Queue|SimpleQueue|JoinableQueue|Pipe|Manager|SyncManager|get_context"
    r"|Parallel|ProcessingPool|ProcessPool|get_reusable_executor|fork)(?:\s*[(),]|\s+as\b)|\buse_multiprocessing\s*="
)


def may_match(source: str) -> bool:
    tensorflow = any(marker in source for marker in _GROUPS[1])
    if tensorflow and any(marker in source for marker in _SETTINGS) and _SETTING.search(source):
        return True
    return (
        tensorflow
        and all(any(marker in source for marker in group) for group in (_GROUPS[0], _GROUPS[2]))
        and _PROCESS_MODULE.search(source) is not None
        and _MAKER.search(source) is not None
    )


def may_match_bytes(data: bytes) -> bool:
    """The substring part of `may_match` on undecoded bytes (Python source is ASCII-compatible),
    so that most files are never decoded."""
    if not any(marker in data for marker in _BYTE_GROUPS[1]):
        return False
    return any(marker in data for marker in _BYTE_SETTINGS) or all(
        any(marker in data for marker in group) for group in (_BYTE_GROUPS[0], _BYTE_GROUPS[2]))
