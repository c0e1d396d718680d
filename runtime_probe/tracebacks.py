"""Find the Python tracebacks in a scenario's stderr and tell where each exception was raised.

A worker exception that a Pool or an executor re-raises in the parent is printed as a chain: the
worker's traceback (inside a RemoteTraceback) is the direct cause of the parent's. Whether a
traceback comes from a worker process is read from its frames, not from the RemoteTraceback
wrapper: the executor also wraps errors of the parent's own queue feeder thread in one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

HEADER = "Traceback (most recent call last):"
# Ray re-raises a task's error as a class named after both: `ray.exceptions.RayTaskError(InvalidArgumentError)`.
EXCEPTION_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:\([\w.]*\))?)(?::\s?(.*))?$")
WORKER_FRAMES = re.compile(
    r'(multiprocessing[/\\]pool\.py", line \d+, in worker'
    r'|concurrent[/\\]futures[/\\]process\.py", line \d+, in _process_worker'
    r'|multiprocessing[/\\]process\.py", line \d+, in _bootstrap)$',
    re.MULTILINE,
)
DIRECT_CAUSE = "The above exception was the direct cause of the following exception:"


@dataclass
class Traceback:
    type: str  # as printed, e.g. tensorflow.python.framework.errors_impl.InvalidArgumentError
    message: str  # first line only
    in_worker: bool
    cause: Traceback | None = None  # the exception this one was raised `from`
    died: str = ""  # the process this exception ended ("SpawnPoolWorker-1" from "Process ...:")

    @property
    def short_type(self) -> str:
        return self.type.rsplit(".", 1)[-1]

    @property
    def where(self) -> str:
        """'worker' if this exception, or the one it was raised from, came from a worker."""
        node = self
        while node is not None:
            if node.in_worker:
                return "worker"
            node = node.cause
        return "parent"


def parse(stderr: str) -> list[Traceback]:
    lines = stderr.splitlines()
    starts = [i for i, line in enumerate(lines) if line == HEADER]
    found: list[Traceback] = []
    caused_next = False
    for index, start in enumerate(starts):
        end = starts[index + 1] if index + 1 < len(starts) else len(lines)
        row = start + 1
        while row < end and lines[row].startswith(" "):
            row += 1
        match = EXCEPTION_LINE.match(lines[row]) if row < end else None
        if match is None:
            caused_next = False
            continue
        header_above = lines[start - 1] if start else ""
        died = re.fullmatch(r"Process (\S+):", header_above)
        tb = Traceback(
            type=match.group(1),
            message=(match.group(2) or "").strip(),
            in_worker=bool(WORKER_FRAMES.search("\n".join(lines[start:row])))
            or died is not None,
            cause=found[-1] if caused_next and found else None,
            died=died.group(1) if died else "",
        )
        found.append(tb)
        caused_next = DIRECT_CAUSE in lines[row:end]
    return found


def final_parent_exception(tracebacks: list[Traceback]) -> Traceback | None:
    """The last exception raised in the parent process: the one that ended it, if it failed."""
    parents = [tb for tb in tracebacks if not tb.in_worker]
    return parents[-1] if parents else None
