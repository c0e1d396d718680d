"""Cheap text checks that skip files no rule can match, before LibCST parses anything.

Every finding needs, in one file: TensorFlow or Keras, a process module, and something that makes
a process pool, executor, process, queue or pipe (a call, a subclass, or an aliased import of one).
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

_PROCESS_MODULE = re.compile(
    r"\b(?:multiprocess(?:ing)?|concurrent\.futures|billiard|joblib|loky|pathos)\b|from\s+concurrent\s+import"
    r"|\bfork\s*\(|\buse_multiprocessing\b"
)
_MAKER = re.compile(
    r"\b(?:Pool|Process|ProcessPoolExecutor|Queue|SimpleQueue|JoinableQueue|Pipe|Manager|SyncManager|get_context"
    r"|Parallel|ProcessingPool|ProcessPool|get_reusable_executor|fork)(?:\s*[(),]|\s+as\b)|\buse_multiprocessing\s*="
)


def may_match(source: str) -> bool:
    return (
        all(any(marker in source for marker in group) for group in _GROUPS)
        and _PROCESS_MODULE.search(source) is not None
        and _MAKER.search(source) is not None
    )


def may_match_bytes(data: bytes) -> bool:
    """The substring part of `may_match` on undecoded bytes (Python source is ASCII-compatible),
    so that most files are never decoded."""
    return all(any(marker in data for marker in group) for group in _BYTE_GROUPS)
