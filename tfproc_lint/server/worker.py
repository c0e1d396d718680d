"""One lint thread with a queue that keeps only the newest snapshot of each document.

Edits that come faster than linting replace the snapshot still waiting for the same document, so
the thread never lints a version that was already superseded when it started; a result that was
overtaken while it ran is dropped by the caller (`deliver` compares versions). An exception in one
job is reported and the thread goes on.
"""

from __future__ import annotations

import threading
from typing import Callable, Generic, TypeVar

Job = TypeVar("Job")


class LatestOnlyWorker(Generic[Job]):
    def __init__(self, run: Callable[[Job], None], on_error: Callable[[Job, BaseException], None]) -> None:
        self._run = run
        self._on_error = on_error
        self._pending: dict[str, Job] = {}
        self._condition = threading.Condition()
        self._stopped = False
        self.superseded = 0  # snapshots replaced before they were linted
        self._thread = threading.Thread(target=self._loop, name="tfproc-lint-worker", daemon=True)
        self._thread.start()

    def submit(self, key: str, job: Job) -> None:
        with self._condition:
            if self._pending.pop(key, None) is not None:
                self.superseded += 1
            self._pending[key] = job
            self._condition.notify()

    def is_pending(self, key: str) -> bool:
        with self._condition:
            return key in self._pending

    def stop(self) -> None:
        with self._condition:
            self._stopped = True
            self._pending.clear()
            self._condition.notify()

    def _loop(self) -> None:
        while True:
            with self._condition:
                while not self._pending and not self._stopped:
                    self._condition.wait()
                if self._stopped:
                    return
                key = next(iter(self._pending))
                job = self._pending.pop(key)
            try:
                self._run(job)
            except Exception as error:  # noqa: BLE001 - a bug in one job must not end the thread
                self._on_error(job, error)
