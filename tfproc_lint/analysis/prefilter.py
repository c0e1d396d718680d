"""Stage 1: a text check that skips files no rule can match, before anything is parsed.

Every rule needs TensorFlow (or Keras) and a process API in the same file, and a process-related
constructor or method name. Kept free of libcst so that the flake8 plugin can import it cheaply.
"""

from __future__ import annotations

import re

_TENSORFLOW = re.compile(r"tensorflow|keras")
_PROCESS_MODULE = re.compile(r"multiprocess|concurrent\.futures|from\s+concurrent\s+import|billiard")
_PROCESS_API = re.compile(r"Pool|Process|Queue|Pipe")


def may_match(source: str) -> bool:
    return bool(
        _PROCESS_API.search(source) and _PROCESS_MODULE.search(source) and _TENSORFLOW.search(source)
    )
