"""The one line a scenario script prints at the end; the runner parses it.

Kept free of TensorFlow and numpy so that importing it costs nothing.
"""

from __future__ import annotations

import json
import math
import os
import sys

RESULT_PREFIX = "PROBE-RESULT "


def _plain(value):
    """numpy arrays and scalars -> lists and floats, so they compare and serialise."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def _close(value, expected, rel_tol: float) -> bool:
    if isinstance(expected, list):
        return (
            isinstance(value, list)
            and len(value) == len(expected)
            and all(_close(v, e, rel_tol) for v, e in zip(value, expected))
        )
    if isinstance(expected, float) or isinstance(value, float):
        return math.isclose(value, expected, rel_tol=rel_tol, abs_tol=rel_tol)
    return value == expected


def report(value, expected, rel_tol: float = 1e-4, **metrics) -> None:
    """Print the result line: the computed value, whether it matches `expected`, metrics."""
    value, expected = _plain(value), _plain(expected)
    line = {
        "ok": _close(value, expected, rel_tol),
        "value": value,
        "expected": expected,
        "metrics": metrics,
    }
    print(RESULT_PREFIX + json.dumps(line), flush=True)


def start_ray():
    """`ray.init` on 2 CPUs for an engine scenario, its session files under a short directory:
    the probe's per-scenario TMPDIR is too long for Ray's socket paths (AF_UNIX, 107 bytes)."""
    import ray

    temp = os.path.join("/tmp", f"ray-{os.getpid()}")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _temp_dir=temp)
    return ray


def engine_python_environment():
    """Spark's Python workers run `PYSPARK_PYTHON`: the interpreter that has TensorFlow."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
