"""Telling a waiting parent: a worker that fails under the guard often leaves its parent waiting
forever (a Pool replaces a dead worker and waits on; a queue's consumer never gets its item). The
worker writes its message to a folder named after the parent and sends it SIGUSR2; the parent's
handler raises the error in its main thread, which interrupts the wait (`Pool.map`, `Queue.get`,
`os.waitpid`). The handler is installed only where SIGUSR2 has no handler yet. One message is raised per
program (per test under pytest, per cell in a notebook: `reset`); the others (sibling workers failing the
same way) are only printed by the workers, so that the parent's clean-up after the first is not cut short,
unless they still come REPEAT_S later (the parent is stuck waiting again).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

from . import errors, state

SIGNAL = getattr(signal, "SIGUSR2", None)
_installed = False
_told = False
_pending: str | None = None  # a message to raise at the next signal
_last: BaseException | None = None
_previous_unraisablehook = sys.unraisablehook
_delivered = False  # one worker's error is raised per program, test or cell (reset); its siblings' are printed
_delivered_at = 0.0
# Workers that keep failing while the parent still waits (a pool's `join()` after the error: a pool whose
# initializer fails replaces its workers forever) raise it again, after the parent had time to clean up.
REPEAT_S = 10.0
_retries = 0
MAX_RETRIES = 20


def _folder(pid: int) -> str:
    import tempfile  # only when a message is sent or read: the import is not free

    return os.path.join(tempfile.gettempdir(), f"tfproc-guard-{pid}")


def install() -> bool:
    """Listen for workers' messages in this process (main thread only); True when listening."""
    global _installed
    if _installed:
        return True
    if SIGNAL is None or threading.current_thread() is not threading.main_thread():
        return False
    if signal.getsignal(SIGNAL) not in (signal.SIG_DFL, None):
        return False
    signal.signal(SIGNAL, _on_signal)
    global _previous_unraisablehook
    _previous_unraisablehook, sys.unraisablehook = sys.unraisablehook, _unraisable
    _installed = True
    import atexit

    atexit.register(_clean_up)
    return True


def _clean_up() -> None:
    folder = _folder(os.getpid())
    if os.path.isdir(folder):
        import shutil

        shutil.rmtree(folder, ignore_errors=True)


def listening() -> bool:
    return _installed


def after_fork_child() -> None:
    """A forked child keeps the handler (signal handlers survive fork) for its own children."""
    global _delivered, _told, _pending
    _delivered, _told, _pending = False, False, None


def _read(pid: int) -> list[str]:
    folder = _folder(pid)
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    messages = []
    for name in names:
        path = os.path.join(folder, name)
        try:
            with open(path, encoding="utf-8") as handle:
                messages.append(handle.read())
            os.unlink(path)
        except OSError:
            continue
    return messages


def reset() -> None:
    """Raise the next worker's error again (a new test, a new notebook cell); drop what came before."""
    global _delivered, _pending, _retries
    _read(os.getpid())
    _delivered, _pending, _retries = False, None, 0


def _on_signal(signum, frame) -> None:
    global _delivered, _delivered_at, _pending, _last
    messages = [m for m in _read(os.getpid()) if m]
    if _pending is None and messages and (not _delivered or time.monotonic() - _delivered_at >= REPEAT_S):
        _pending = messages[0]
    if _pending is None:
        return
    code, _, message = _pending.partition("\t")
    _pending, _delivered, _delivered_at = None, True, time.monotonic()
    _last = type(errors.make(code, "x"))(message)
    _last.alarm_text = f"{code}\t{message}"
    raise _last


def _unraisable(unraisable) -> None:
    """The signal came while the main thread ran a callback whose errors Python only prints (an at-fork
    handler, a finaliser): deliver the error again a moment later instead."""
    global _pending, _retries
    if _last is not None and unraisable.exc_value is _last and _retries < MAX_RETRIES:
        _pending, _retries = _last.alarm_text, _retries + 1
        threading.Timer(0.05, os.kill, (os.getpid(), SIGNAL)).start()
        return
    _previous_unraisablehook(unraisable)


def tell(error: BaseException) -> None:
    """Print a worker's guard error, and raise it in the waiting parent (once per process); in the
    process that raised it, a message the program swallows would otherwise go unseen."""
    global _told
    code = getattr(error, "code", "TFP")
    pid = state.parent_pid
    print(f"tfproc-guard (pid {os.getpid()}): {error}", file=sys.stderr, flush=True)
    if _told or not pid or not state.parent_alarm:
        return
    _told = True
    send(pid, f"{code}\t{error} (in worker process {os.getpid()})")


def send(pid: int, message: str) -> None:
    """Queue `message` for process `pid` and signal it."""
    folder = _folder(pid)
    try:
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f"{os.getpid()}-{id(message)}.txt")
        with open(path + ".tmp", "w", encoding="utf-8") as handle:
            handle.write(message)
        os.replace(path + ".tmp", path)
        os.kill(pid, SIGNAL)
    except OSError:
        pass
