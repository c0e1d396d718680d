"""How many GPUs TensorFlow sees here, asked cheaply first and in a subprocess only if needed."""

from __future__ import annotations

import glob
import shutil
import sys

from .process import execute

QUERY = "import tensorflow as tf; print('GPUS', len(tf.config.list_physical_devices('GPU')))"


def gpu_count(python: str = sys.executable, timeout: float = 120) -> int:
    if not glob.glob("/dev/nvidia*") and shutil.which("nvidia-smi") is None:
        return 0  # no driver: no need to import TensorFlow to know
    run = execute([python, "-c", QUERY], timeout=timeout)
    for line in run.stdout.splitlines():
        if line.startswith("GPUS "):
            return int(line.split()[1])
    return 0


def skip_reason(needed: int, available: int) -> str | None:
    if needed <= available:
        return None
    return "skipped: no GPU" if available == 0 else f"skipped: needs {needed} GPUs, {available} here"
