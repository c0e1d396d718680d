"""A pool whose waiter the signal cannot reach: a worker that fails under the guard tells its parent,
whose signal handler raises the error in the main thread (alarm.py). But Python runs signal handlers
only between the main thread's bytecodes: a main thread inside TensorFlow's native code (`fit` pulling
batches from Keras' data workers through tf.data) never runs it, and a pool awaited by another thread
(Keras' data feeder, tf.data's generator thread) never sees it. So the pool's own worker-handler
thread, which wakes up whenever one of its workers exits, takes the message those workers left and
fails the pool's pending tasks with it: whoever waits on them gets the error.

In a spawned child re-importing the main module, a Pool of spawn or forkserver workers fails as
multiprocessing would fail it (TFP202), but before it makes its queues: a child killed while it fails
leaves no semaphores behind."""

from __future__ import annotations

import sys

from . import alarm, children

_patched: set[str] = set()


def patch(module) -> None:
    """Hook a multiprocessing.pool (or multiprocess.pool) module's Pool once."""
    cls = getattr(module, "Pool", None)
    if cls is None or module.__name__ in _patched or not hasattr(cls, "_join_exited_workers"):
        return
    _patched.add(module.__name__)
    original = cls._join_exited_workers

    def join_exited_workers(pool):
        exited = [worker.pid for worker in pool if worker.exitcode]  # ended with an error (exit code != 0)
        cleaned = original(pool)
        if exited:
            error = alarm.take(exited)
            if error is not None:
                _fail_pending(error)
        return cleaned

    cls._join_exited_workers = staticmethod(join_exited_workers)
    setup_queues = cls._setup_queues

    def _setup_queues(self):
        children.check_pool_start(self._ctx)
        return setup_queues(self)

    cls._setup_queues = _setup_queues


def _fail_pending(error: BaseException) -> None:
    """Fail every task of the pool whose worker-handler thread calls this (its `cache` of results)."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_name != "_handle_workers":
        frame = frame.f_back
    cache = frame.f_locals.get("cache") if frame is not None else None
    for result in list((cache or {}).values()):
        # A map's result completes once each of its chunks is set; imap's items are set at their next index.
        for _ in range(max(1, getattr(result, "_number_left", 1))):
            try:
                result._set(getattr(result, "_index", 0), (False, error))
            except Exception:  # noqa: BLE001 - set meanwhile by the pool's result thread, or another shape
                break
