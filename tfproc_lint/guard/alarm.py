"""Telling a waiting parent: a worker that fails under the guard often leaves its parent waiting
forever (a Pool replaces a dead worker and waits on; a queue's consumer never gets its item). The
worker writes its message to a folder named after the parent and sends it SIGUSR2; the parent's
handler raises the error in its main thread, which interrupts the wait (`Pool.map`, `Queue.get`,
`os.waitpid`). The handler is installed only where SIGUSR2 has no handler yet; the first message
raises, later ones (other workers failing the same way) are only printed.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import threading
import time

from . import errors, state

SIGNAL = getattr(signal, "SIGUSR2", None)
_installed = False
_raised_at = 0.0
_told = False
QUIET_S = 1.0  # after raising one worker's error, the same failure in its siblings is only printed


def _folder(pid: int) -> str:
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
    _installed = True
    import atexit

    atexit.register(_clean_up)
    return True


def _clean_up() -> None:
    shutil.rmtree(_folder(os.getpid()), ignore_errors=True)


def listening() -> bool:
    return _installed


def after_fork_child() -> None:
    """A forked child keeps the handler (signal handlers survive fork) for its own children."""
    global _raised_at, _told
    _raised_at, _told = 0.0, False


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


def _on_signal(signum, frame) -> None:
    global _raised_at
    messages = [m for m in _read(os.getpid()) if m]
    if not messages or time.monotonic() - _raised_at < QUIET_S:
        return
    _raised_at = time.monotonic()
    code, _, message = messages[0].partition("\t")
    cls = type(errors.make(code, "x"))
    raise cls(message)


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
