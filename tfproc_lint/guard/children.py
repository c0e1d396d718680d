"""Spawned and forkserver children: how they get the guard, and the two ways they die before doing any
work while their pool starts another in their place, forever.

- The parent puts a `Bootstrap` in the preparation data it sends (crossing.patch); unpickling it in the
  child installs the guard there before the main module is re-imported.
- TFP202: re-importing the main module starts processes (a module-level Pool, a second
  set_start_method, Keras' data workers started by a module-level `fit`).
- TFP204: the child cannot rebuild what it was sent because its class or function was defined in a
  main module it cannot import (a notebook cell, `python -c`, stdin): a `PyDataset` subclass for
  Keras' data workers, a worker function.

Such a child tells its parent (alarm.tell), which raises the error, and exits with code 1 without a
traceback of its own: its siblings, started in its place, would print the same one again and again.
"""

from __future__ import annotations

import os
import re
import sys
import threading

from tfproc_lint.knowledge.packages import TENSORFLOW_MARKERS

from . import alarm, costs, errors, objects, state

importing_main = False  # this child is re-importing the main module now
_failed: errors.GuardError | None = None  # the TFP202 error this child told (raised in any thread)


class Bootstrap:
    """Sent to spawned and forkserver children in the preparation data; unpickling it installs the
    guard there (through `exec`, so that a child that cannot import tfproc_lint just goes on)."""

    def __init__(self, parent_pid: int, alarm_ok: bool, path: str):
        self.args = (parent_pid, alarm_ok, path)

    def __reduce__(self):
        source = ("try:\n"
                  " import sys\n"
                  " from importlib.util import find_spec\n"
                  f" if find_spec('tfproc_lint') is None: sys.path.append({self.args[2]!r})\n"
                  " from tfproc_lint import guard\n"
                  f" guard.start_child({self.args[0]!r}, {self.args[1]!r})\n"
                  "except Exception as exc:\n"
                  " print('tfproc-guard: not installed in this worker:', exc, file=sys.stderr)\n")
        return exec, (source, {})


def prepare(parent_pid: int, alarm_ok: bool) -> None:
    """In a spawned or forkserver child, before the guard is installed (guard.start_child)."""
    state.parent_pid, state.parent_alarm = parent_pid, alarm_ok
    costs.worker = True


def guard_start() -> None:
    """Once the guard is installed in this child: watch its re-import of the main module (TFP202) and
    its unpickling of the Process object it runs (TFP204), the two steps of multiprocessing's
    spawn._main that follow the preparation data."""
    for package in ("multiprocessing", "multiprocess"):
        spawn = sys.modules.get(f"{package}.spawn")
        if spawn is None:
            continue
        for name in ("_fixup_main_from_path", "_fixup_main_from_name"):
            if hasattr(spawn, name):
                setattr(spawn, name, _fixup_main(getattr(spawn, name)))
        reduction = getattr(spawn, "reduction", None)
        if reduction is not None and hasattr(getattr(reduction, "pickle", None), "load"):
            spawn.reduction = _ProcessLoad(spawn, reduction)


def bootstrap_error(exc: BaseException) -> errors.GuardError:
    """TFP202 for the error multiprocessing raises when this child starts processes (or sets the start
    method) while it re-imports the main module; told to the parent once."""
    global _failed
    if _failed is None:
        frame = sys._current_frames().get(threading.main_thread().ident)  # the import runs in the main thread
        frame = state.user_frame(frame=frame) if frame is not None else None
        place = f" (at {frame.f_code.co_filename}:{frame.f_lineno})" if frame is not None else ""
        _failed = errors.make("TFP202", (
            f"spawned worker process {os.getpid()} re-imports the main module, which starts processes (or sets "
            f"the start method) when imported{place}: {errors.described(exc)}; the worker dies and a pool "
            "replaces it forever"))
        alarm.tell(_failed, signal_parent=False)  # the parent is told as this child exits (_exit)
    return _failed


def starting_while_importing(exc: RuntimeError) -> bool:
    """Whether `exc` is multiprocessing refusing to start a process in a child re-importing its main
    module (from any thread: Keras starts its data workers from a thread of its own)."""
    return bool(state.parent_pid) and "bootstrapping phase" in str(exc)


def check_pool_start(context) -> None:
    """A Pool being made in this process with `context`: in a child re-importing the main module, raise
    TFP202 now if multiprocessing would refuse to start its workers (spawn, forkserver)."""
    if not state.parent_pid:  # not a child of a guarded process
        return
    package = context.__module__.rpartition(".")[0]  # multiprocessing or multiprocess
    process, spawn = sys.modules.get(f"{package}.process"), sys.modules.get(f"{package}.spawn")
    if not (process and spawn and getattr(process.current_process(), "_inheriting", False)):
        return
    if context.get_start_method() == "fork":
        return
    try:
        spawn._check_not_importing_main()  # multiprocessing's own error, raised where it would be
    except RuntimeError as exc:
        raise bootstrap_error(exc) from exc


def _fixup_main(original):
    def fixup(*args, **kwargs):
        global importing_main
        importing_main = True
        try:
            return original(*args, **kwargs)
        except BaseException as exc:
            if _failed is None:
                if not (isinstance(exc, RuntimeError) and not isinstance(exc, errors.GuardError)
                        and ("bootstrapping phase" in str(exc) or "already been set" in str(exc))):
                    raise
                bootstrap_error(exc)
            _exit(_failed)
        finally:
            importing_main = False
    return fixup


def _exit(error: errors.GuardError):
    """End this child with exit code 1 and no traceback (the error was printed once for all its siblings,
    alarm.tell): first release what its failed start made (the semaphores of a half-made Pool, which
    would be reported leaked), with SIGTERM held back meanwhile (the parent, told by a sibling, kills the
    children still running as it exits), then tell the parent."""
    import signal

    held = hasattr(signal, "pthread_sigmask") and hasattr(signal, "SIGTERM")
    if held:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    try:
        for package in ("multiprocessing", "multiprocess"):
            util = sys.modules.get(f"{package}.util")
            if util is not None:
                try:
                    util._run_finalizers(0)
                except Exception:  # noqa: BLE001 - what is left is released at exit as usual
                    pass
    finally:
        if held:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    alarm.tell_parent(error)
    raise SystemExit(1) from None


class _ProcessLoad:
    """Stands in for `reduction` in spawn._main while it unpickles the Process object (its target and
    arguments) right after the main module's re-import; then puts the module back."""

    def __init__(self, spawn, reduction):
        self.spawn, self.reduction = spawn, reduction
        self.pickle = _Pickle(reduction.pickle, self.load)  # spawn._main calls reduction.pickle.load(from_parent)

    def load(self, *args, **kwargs):
        self.spawn.reduction = self.reduction
        try:
            return self.reduction.pickle.load(*args, **kwargs)
        except Exception as exc:
            error = loading_error(exc)
            if error is None:
                raise
            alarm.tell(error, signal_parent=False)
            _exit(error)

    def __getattr__(self, name):
        return getattr(self.reduction, name)


class _Pickle:
    def __init__(self, module, load):
        self.module, self.load = module, load

    def __getattr__(self, name):
        return getattr(self.module, name)


_MISSING = re.compile(r"Can't get attribute '([^']+)' on <module '__main__'")


def loading_error(exc: BaseException) -> errors.GuardError | None:
    """In a worker: what it was sent cannot be rebuilt here (TFP204, TFP102), or None."""
    text = errors.described(exc)
    main = sys.modules.get("__main__")
    missing = _MISSING.search(str(exc)) if isinstance(exc, AttributeError) else None
    if missing and not getattr(main, "__file__", None):
        return errors.crossing_class("TFP204", RuntimeError)(errors.text(
            "TFP204", f"worker process {os.getpid()} cannot find {missing.group(1)}, which it was sent, in the main "
                      "module (defined in a notebook cell, an interactive session, `python -c` or stdin, which "
                      f"workers do not import): {text}; the worker dies and its pool starts another, forever"))
    tb, in_tensorflow = exc.__traceback__, False
    while tb is not None:
        in_tensorflow = in_tensorflow or any(f"{os.sep}{m}{os.sep}" in tb.tb_frame.f_code.co_filename
                                             for m in objects.TF_MODULES)
        tb = tb.tb_next
    if not in_tensorflow and not any(m in str(exc) for m in TENSORFLOW_MARKERS):
        return None
    return errors.crossing_class("TFP102", RuntimeError)(errors.text(
        "TFP102", f"worker process {os.getpid()} cannot rebuild the TensorFlow or Keras object it was sent "
                  f"({text}); the worker dies and its pool waits for it forever"))
