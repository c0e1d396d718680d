"""TFP401: a worker process that starts TensorFlow on a GPU with the default memory policy maps nearly
all of the GPU's memory, so its sibling workers run out. Only where TensorFlow sees a GPU.

Workers: a multiprocessing worker (a pool's, or a Dask worker spawned by its nanny), a Spark Python
worker (forked by the daemon), and a Ray task or actor that shares its GPU: a fractional `num_gpus`, or
`num_gpus=0` on a node whose GPUs it still sees (Ray leaves CUDA_VISIBLE_DEVICES set for it unless
RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO=1). A Ray worker given whole GPUs has them to itself."""

from __future__ import annotations

import os
import sys
import warnings

from . import engine_workers, errors, state


def _is_worker() -> bool:
    if state.parent_pid or state.forked_from:
        return True
    process = sys.modules.get("multiprocessing.process")
    return bool(process and process.parent_process() is not None)


def ray_sharing(gpus: float) -> str | None:
    """Why a Ray task or actor assigned `gpus` GPUs shares them with other workers; None when it has them
    to itself."""
    if gpus <= 0:
        return ("this Ray task or actor has num_gpus=0 but sees the node's GPUs (Ray leaves CUDA_VISIBLE_DEVICES "
                "set unless RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO=1), next to the workers given them")
    if gpus < 1:
        return f"this Ray task or actor has num_gpus={gpus:g}, so up to {int(1 // gpus)} of them share each GPU"
    return None


def _sharing() -> str | None:
    """Why this process may share its GPUs with other workers ("" for a plain worker); None: it does not."""
    ray = sys.modules.get("ray")
    if engine_workers.reporting and ray is not None:
        resources = ray.get_runtime_context().get_assigned_resources()
        return ray_sharing(float(resources.get("GPU", 0.0)))
    return "" if _is_worker() else None


def check_worker_memory(context) -> None:
    """Warn (once) when this worker's runtime starts on GPUs none of which limits its memory."""
    try:
        sharing = _sharing()
        if sharing is None:
            return
        gpus = context.list_physical_devices("GPU")
        if not gpus or os.environ.get("TF_FORCE_GPU_ALLOW_GROWTH", "").lower() == "true":
            return
        limited = [d for d in gpus if context.get_memory_growth(d) or context.get_logical_device_configuration(d)]
        if limited:
            return
    except Exception:  # noqa: BLE001 - a check must never break the program
        return
    text = errors.text("TFP401", (
        f"worker process {os.getpid()} started TensorFlow on {len(gpus)} GPU(s) with the default memory "
        f"policy ({state.start_text()}){'; ' + sharing if sharing else ''}: each such worker maps nearly all "
        "memory of every visible GPU, so with two or more workers per GPU the next one fails with "
        "CUDA_ERROR_OUT_OF_MEMORY"))
    engine_workers.report(text)  # a Ray or Spark worker's warnings may not reach the driver's terminal
    warnings.warn(text, errors.GuardWarning, stacklevel=2)
