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
_printed: set[str] = set()  # rule codes this process printed (tell)
# Workers that keep failing while the parent still waits (a pool's `join()` after the error: a pool whose
# initializer fails replaces its workers forever) raise it again, after the parent had time to clean up.
REPEAT_S = 10.0
_retries = 0
MAX_RETRIES = 20
# While the main thread is in a call that fails by itself when a worker dies as it starts (Dask's cluster
# start: "Nanny failed to start"), a worker's error is held back and raised, chained to the library's own
# error, when that call fails: raised at once, it would interrupt the start, and the library's clean-up of
# a half-started cluster then waits out its time limits (10 s at exit): slower than the program alone. If
# the call neither fails nor returns within DEFER_S, the error is raised then (deferred_call).
DEFER_S = 30.0
_defer_depth = 0
_deferred: tuple[str, float] | None = None  # (message, when to raise it anyway)


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
    _printed.clear()


def _read(pid: int, senders=None) -> list[str]:
    """Take the messages queued for process `pid` (from the worker processes `senders` only, default
    all): each is taken once, by whichever thread renames its file first."""
    folder = _folder(pid)
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    messages = []
    for name in names:
        sender, dash, rest = name.partition("-")
        if not (dash and rest.endswith(".txt")) or (senders is not None and sender not in senders):
            continue
        path = os.path.join(folder, name)
        try:
            os.rename(path, path + ".taken")
            with open(path + ".taken", encoding="utf-8") as handle:
                messages.append(handle.read())
            os.unlink(path + ".taken")
        except OSError:
            continue
    return messages


def reset() -> None:
    """Raise the next worker's error again (a new test, a new notebook cell); drop what came before."""
    global _delivered, _pending, _retries, _deferred
    _read(os.getpid())
    _delivered, _pending, _retries, _deferred = False, None, 0, None
    _printed.clear()
    folder = _folder(os.getpid())
    for name in _listing(folder):
        if name.endswith(TOLD):
            try:
                os.unlink(os.path.join(folder, name))
            except OSError:
                pass


def _listing(folder: str) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []


def _on_signal(signum, frame) -> None:
    global _pending, _last, _deferred
    messages = [m for m in _read(os.getpid()) if m]
    if _pending is None and messages and (not _delivered or time.monotonic() - _delivered_at >= REPEAT_S):
        _pending = messages[0]
    if _defer_depth:
        if _pending is not None and _deferred is None:
            _deferred = (_pending, time.monotonic() + DEFER_S)
            _wake_in(DEFER_S)
        _pending = None
        if _deferred is not None and time.monotonic() >= _deferred[1]:  # the call did not fail by itself
            _pending, _deferred = _deferred[0], None
    if _pending is None:
        return
    _last, _pending = _error(_pending), None
    raise _last


def _wake_in(seconds: float) -> None:
    timer = threading.Timer(seconds, os.kill, (os.getpid(), SIGNAL))
    timer.daemon = True
    timer.start()


def deferred_call(function, *args, **kwargs):
    """`function(*args, **kwargs)` in the main thread with the workers' errors held back (DEFER_S): when it
    fails, the worker's error is raised instead, chained to the call's own; when it returns, the worker's
    error (if one came) is raised then."""
    global _defer_depth
    if not _installed or threading.current_thread() is not threading.main_thread():
        return function(*args, **kwargs)
    _defer_depth += 1
    try:
        result = function(*args, **kwargs)
    except BaseException as exc:
        _defer_depth -= 1
        error = None if _defer_depth or isinstance(exc, errors.GuardError) else _take_deferred()
        if error is not None:
            raise error from exc
        raise
    _defer_depth -= 1
    error = None if _defer_depth else _take_deferred()
    if error is not None:
        raise error
    return result


def _take_deferred() -> BaseException | None:
    """The error held back (or one whose signal has not been handled yet), marked delivered; else None."""
    global _deferred
    text, _deferred = (_deferred[0] if _deferred else None), None
    if text is None and not _delivered:
        messages = [m for m in _read(os.getpid()) if m]
        text = messages[0] if messages else None
    return _error(text) if text is not None else None


def _error(text: str) -> BaseException:
    """The error of a worker's message (`CODE\tmessage`), marked delivered."""
    global _delivered, _delivered_at
    code, _, message = text.partition("\t")
    _delivered, _delivered_at = True, time.monotonic()
    error = type(errors.make(code, "x"))(message)
    error.alarm_text = text
    return error


def take(pids) -> BaseException | None:
    """From a pool's thread in this process, when its workers `pids` exited: the error one of them sent and
    the main thread has not raised (it waits in native code, TensorFlow's, or another thread waits on the
    pool, Keras' data feeder), marked delivered so that the main thread does not raise it again; else None."""
    if not _installed:
        return None
    messages = [m for m in _read(os.getpid(), {str(pid) for pid in pids}) if m]
    return _error(messages[0]) if messages else None


def _unraisable(unraisable) -> None:
    """The signal came while the main thread ran a callback whose errors Python only prints (an at-fork
    handler, a finaliser): deliver the error again a moment later instead."""
    global _pending, _retries
    if _last is not None and unraisable.exc_value is _last and _retries < MAX_RETRIES:
        _pending, _retries = _last.alarm_text, _retries + 1
        threading.Timer(0.05, os.kill, (os.getpid(), SIGNAL)).start()
        return
    _previous_unraisablehook(unraisable)


def tell(error: BaseException, signal_parent: bool = True) -> None:
    """Print a worker's guard error, and raise it in the waiting parent (once per process; later, by
    `tell_parent`, when `signal_parent` is false); in the process that raised it, a message the program
    swallows would otherwise go unseen. Printed once per rule among a guarded parent's workers (their pool
    starts one after another, all failing the same way), as one line of its own."""
    code = getattr(error, "code", "TFP")
    if _first_to_tell(code, state.parent_pid):
        try:
            sys.stderr.write(f"tfproc-guard (pid {os.getpid()}): {error}\n")  # one write: no interleaving
            sys.stderr.flush()
        except (OSError, ValueError, AttributeError):  # no usable stderr: the parent still raises it
            pass
    if signal_parent:
        tell_parent(error)


def tell_parent(error: BaseException) -> None:
    """Raise `error` in the waiting parent (once per process), unless it is raised in a pool's task: the
    pool sends it back as the task's result, and a parent that raised it at once would terminate the pool
    while this worker writes that result, holding the lock of the pool's result queue (which a killed
    worker never releases: the pool's termination then waits forever)."""
    global _told
    pid = state.parent_pid
    if _told or not pid or not state.parent_alarm or _in_pool_task():
        return
    _told = True
    send(pid, f"{getattr(error, 'code', 'TFP')}\t{error} (in worker process {os.getpid()})")


# Worker loops whose task errors go back to the parent as results: (function, the local that holds the task
# while it runs, the file): multiprocessing's (and multiprocess') Pool, ProcessPoolExecutor, loky's executor.
TASK_LOOPS = (("worker", "task", "pool.py"), ("_process_worker", "call_item", "process.py"),
              ("_process_worker", "call_item", "process_executor.py"))


def _in_pool_task() -> bool:
    frame = sys._getframe(2)
    while frame is not None:
        code = frame.f_code
        for name, local, filename in TASK_LOOPS:
            if (code.co_name == name and code.co_filename.endswith(filename)
                    and frame.f_locals.get(local) is not None):  # not while it waits for a task (or unpickles it)
                return True
        frame = frame.f_back
    return False


TOLD = ".told"


def _first_to_tell(code: str, parent: int | None) -> bool:
    """Whether this process is the first of its guarded parent's children to print rule `code` (a file
    made exclusively in the parent's folder; the parent removes the folder at exit, `reset` its marks)."""
    if code in _printed:
        return False
    _printed.add(code)
    if not parent:
        return True
    folder = _folder(parent)
    try:
        os.makedirs(folder, exist_ok=True)
        os.close(os.open(os.path.join(folder, code + TOLD), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    except OSError:
        return True
    return True


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
