"""TFP401: a worker process that starts TensorFlow on a GPU with the default memory policy maps nearly
all of the GPU's memory, so its sibling workers run out. Only where TensorFlow sees a GPU."""

from __future__ import annotations

import os
import warnings

from . import errors, state


def _is_worker() -> bool:
    if state.parent_pid or state.forked_from:
        return True
    import sys

    process = sys.modules.get("multiprocessing.process")
    return bool(process and process.parent_process() is not None)


def check_worker_memory(context) -> None:
    """Warn (once) when this worker's runtime starts on GPUs none of which limits its memory."""
    try:
        if not _is_worker():
            return
        gpus = context.list_physical_devices("GPU")
        if not gpus or os.environ.get("TF_FORCE_GPU_ALLOW_GROWTH", "").lower() == "true":
            return
        limited = [d for d in gpus if context.get_memory_growth(d) or context.get_logical_device_configuration(d)]
        if limited:
            return
    except Exception:  # noqa: BLE001 - a check must never break the program
        return
    warnings.warn(errors.text("TFP401", (
        f"worker process {os.getpid()} started TensorFlow on {len(gpus)} GPU(s) with the default memory "
        f"policy ({state.start_text()}): each such worker maps nearly all memory of every visible GPU, "
        "so with two or more workers per GPU the next one fails with CUDA_ERROR_OUT_OF_MEMORY")),
        errors.GuardWarning, stacklevel=2)
