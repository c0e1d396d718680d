"""The runtime guard: run a program with TensorFlow and multiprocessing, and turn the silent hangs
(and the errors that say nothing of the cause) into errors that name the tfproc-lint rule.

    python -m tfproc_lint.guard script.py [args...]
    python -m tfproc_lint.guard --warn script.py   # TFPROC_GUARD_WARN=1: a fork that can hang only warns
    pytest --tfproc-guard
    import tfproc_lint.guard; tfproc_lint.guard.install()
    %load_ext tfproc_lint.guard

Loaded into the user's program: it imports neither LibCST nor the linter, and TensorFlow only when the
program does (see watch.py). What it checks: README.md, "Runtime guard".
"""

from __future__ import annotations

import os
import sys

from .errors import GuardError, GuardWarning

__all__ = ["GuardError", "GuardWarning", "install", "installed", "load_ipython_extension"]

_installed = False


def installed() -> bool:
    return _installed


def install() -> None:
    """Install the guard in this process (and, through multiprocessing, in the workers it starts)."""
    global _installed
    if _installed:
        return
    _installed = True
    from . import alarm, costs, crossing, environ, state, tfhooks, watch

    state.arm_fork_child = tfhooks.arm_fork_child
    alarm.install()
    os.register_at_fork(before=crossing.before_fork, after_in_child=crossing.after_fork_child)
    os.register_at_fork(after_in_child=tfhooks.after_fork_child)
    environ.install()
    import multiprocessing

    crossing.patch(multiprocessing)
    watch.watch({"tensorflow": lambda module: tfhooks.patch(), "multiprocess": crossing.patch,
                 "joblib": crossing.patch_joblib, "keras": costs.patch_keras,
                 "multiprocessing.pool": _pool_hooks, "multiprocess.pool": _pool_hooks,
                 "ray": _engines("patch_ray"), "distributed": _engines("patch_dask"),
                 "pyspark": _engines("patch_spark"), "distributed.protocol.keras": _engines("patch_dask_keras")})


def _pool_hooks(module) -> None:
    from . import costs, pools

    costs.patch_pool(module)
    pools.patch(module)


def start_child(parent_pid: int, alarm_ok: bool) -> None:
    """In a spawned or forkserver child, before it re-imports the main module: what the parent's
    preparation data runs there (children.Bootstrap)."""
    from . import children

    children.prepare(parent_pid, alarm_ok)
    install()
    children.guard_start()


def _engines(name: str):
    """engines.NAME, imported only once the program imports that engine (most programs never do)."""

    def patch(module) -> None:
        from . import engines

        getattr(engines, name)(module)

    return patch


def setup_engine_worker() -> None:
    """In a Ray worker (runtime_env's worker_process_setup_hook) or Spark's Python daemon: the guard as
    in a multiprocessing worker, its warnings also handed to the driver (engine_workers.py)."""
    try:
        from . import costs, engine_workers

        engine_workers.reporting = True
        costs.worker = True
        install()
        if "keras" in sys.modules:
            costs.patch_keras()
    except Exception as exc:  # noqa: BLE001 - a worker without the guard still does its work
        print(f"tfproc-guard: not installed in this engine worker: {exc!r}", file=sys.stderr)


def load_ipython_extension(ipython) -> None:
    """`%load_ext tfproc_lint.guard`: install the guard in the kernel."""
    from . import alarm

    install()
    ipython.events.register("pre_run_cell", lambda *args: alarm.reset())  # each cell gets its worker error
    print("tfproc-guard installed: TFP101-103, TFP201-204, TFP301-303 and TFP401-403 are checked at run time",
          file=sys.stdout)
