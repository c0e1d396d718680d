"""Cheap text checks that skip files no rule can match, before LibCST parses anything.

Every finding needs, in one file: TensorFlow or Keras, a process module, and something that makes
a process pool, executor, process, queue or pipe (a call, a subclass, or an aliased import of one).
Substring tests reject most files; two regular expressions confirm the rest. The checks only ever
let too much through, never too little (tests/test_prefilter.py). Kept free of libcst so that the
flake8 plugin can import it cheaply.
"""

from __future__ import annotations

import re

_PROCESS_MODULES = ("multiprocess", "concurrent", "billiard")  # substrings: `in` is fastest
_TENSORFLOW = ("tensorflow", "keras")
_PROCESS_API = ("Pool", "Process", "Queue", "Pipe", "get_context")

_PROCESS_MODULE = re.compile(r"\b(?:multiprocess(?:ing)?|concurrent\.futures|billiard)\b|from\s+concurrent\s+import")
_MAKER = re.compile(
    r"\b(?:Pool|Process|ProcessPoolExecutor|Queue|SimpleQueue|JoinableQueue|Pipe|Manager|SyncManager|get_context)"
    r"(?:\s*[(),]|\s+as\b)"
)


def may_match(source: str) -> bool:
    return (
        any(marker in source for marker in _PROCESS_MODULES)
        and any(marker in source for marker in _TENSORFLOW)
        and any(marker in source for marker in _PROCESS_API)
        and _PROCESS_MODULE.search(source) is not None
        and _MAKER.search(source) is not None
    )
