"""One lint thread with a queue that keeps only the newest snapshot of each document.

Edits that come faster than linting replace the snapshot still waiting for the same document, so
the thread never lints a version that was already superseded when it started; a result that was
overtaken while it ran is dropped by the caller (`deliver` compares versions). A job submitted
with `later=True` (the slower second look at a version already published) runs only when no other
job waits, and any new job for its document replaces it. An exception in one job is reported and
the thread goes on.
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
        self._later: dict[str, Job] = {}
        self._condition = threading.Condition()
        self._stopped = False
        self.superseded = 0  # snapshots replaced before they were linted
        self._thread = threading.Thread(target=self._loop, name="tfproc-lint-worker", daemon=True)
        self._thread.start()

    def submit(self, key: str, job: Job, later: bool = False) -> None:
        with self._condition:
            if self._pending.pop(key, None) is not None:
                self.superseded += 1
            self._later.pop(key, None)
            (self._later if later else self._pending)[key] = job
            self._condition.notify()

    def is_pending(self, key: str) -> bool:
        """Whether a job for `key` waits (a `later` one does not count: it looks at a version
        already published)."""
        with self._condition:
            return key in self._pending

    def stop(self) -> None:
        with self._condition:
            self._stopped = True
            self._pending.clear()
            self._later.clear()
            self._condition.notify()

    def _loop(self) -> None:
        while True:
            with self._condition:
                while not self._pending and not self._later and not self._stopped:
                    self._condition.wait()
                if self._stopped:
                    return
                queue = self._pending or self._later
                key = next(iter(queue))
                job = queue.pop(key)
            try:
                self._run(job)
            except Exception as error:  # noqa: BLE001 - a bug in one job must not end the thread
                self._on_error(job, error)
