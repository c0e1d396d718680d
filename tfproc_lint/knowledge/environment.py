"""Environment variables TensorFlow and CUDA read once, and how a program sets them.

The linter (TFP401, TFP403, the pre-filter) and the runtime guard (guard/environ.py) share this table."""

from __future__ import annotations

# Environment variables the runtime reads once (CUDA's device list at CUDA initialisation, the
# allocator and the thread pools when the runtime starts): what each does when set too late.
RUNTIME_ENVIRONMENT: dict[str, str] = {
    "CUDA_VISIBLE_DEVICES": "CUDA has enumerated the GPUs already, so the process keeps every GPU it saw "
                            "(workers meant to get one GPU each all land on the same ones)",
    "TF_FORCE_GPU_ALLOW_GROWTH": "the GPU allocator exists already, so memory growth stays off",
    "TF_GPU_ALLOCATOR": "the GPU allocator exists already, so the setting does nothing",
    "TF_NUM_INTEROP_THREADS": "the thread pools exist already, so the limit does nothing",
    "TF_NUM_INTRAOP_THREADS": "the thread pools exist already, so the limit does nothing",
}
ENVIRON = "os.environ"
ENVIRON_SETTERS = frozenset({"update", "setdefault", "__setitem__"})
PUTENV = "os.putenv"
# A process that sets one of these before TensorFlow starts does not map all GPU memory (TFP401).
GPU_MEMORY_ENVIRONMENT = frozenset({"CUDA_VISIBLE_DEVICES", "TF_FORCE_GPU_ALLOW_GROWTH", "TF_GPU_ALLOCATOR"})
# Names whose mention (a runtime_env's env_vars, a launcher) may hide or limit the GPUs of engine
# workers: TFP401's engine checks stay silent. RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO=1 makes Ray give
# zero-GPU workers an empty CUDA_VISIBLE_DEVICES (by default, Ray 2.60 leaves the node's: measured).
GPU_HIDING_VARIABLES = (*sorted(GPU_MEMORY_ENVIRONMENT), "RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO")
