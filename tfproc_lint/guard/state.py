"""What the guard knows about this process: when and where TensorFlow's runtime started (and where a
TF1 graph was first built), and how this process came to be (forked from a parent whose runtime had
started, or that had built a graph; spawned by a guarded one)."""

from __future__ import annotations

import os
import sys
import time

from tfproc_lint.knowledge.packages import RUNTIME_PACKAGES

# Frames in these folders are not "where": the user's line that called into them is.
_LIBRARY_PARTS = tuple(os.sep + part + os.sep for part in (
    *RUNTIME_PACKAGES, "absl", "site-packages", "dist-packages", "multiprocessing",
    "concurrent", "importlib", "collections", os.path.join("tfproc_lint", "guard"),
))


class Start:
    def __init__(self, what: str, where: str, at: float, pid: int):
        self.what = what  # "a tf.compat.v1.Session was created", ...
        self.where = where  # "train.py:12 in main"
        self.at = at  # time.time()
        self.pid = pid

    def describe(self) -> str:
        return f"{self.what} at {self.where}"


started: Start | None = None  # the runtime's start, in this process or inherited through fork
graph_built: Start | None = None  # the first tf.Graph built, here or inherited: its thread is not forked
forked_after_graph: int | None = None  # the parent's pid, when forked after `graph_built` but before `started`
forked_from: int | None = None  # the parent's pid, when this process was forked after `started`
parent_pid: int | None = None  # a guarded parent to tell when an error here would leave it waiting
parent_alarm = False  # whether that parent listens (see alarm.py)
# TFPROC_GUARD_WARN=1 (or `python -m tfproc_lint.guard --warn`, which sets it for the workers too): where the
# guard stops a run that can hang but may still pass (TFP201: TensorFlow in a child forked after the start),
# it warns and lets it run. Errors the program would raise anyway (pickling, bootstrapping) stay errors.
WARN_ENV = "TFPROC_GUARD_WARN"


def warn_only() -> bool:
    return os.environ.get(WARN_ENV, "").strip().lower() not in ("", "0", "false", "no")


# Set by install(): tfhooks.arm_fork_child, which crossing calls in a child forked after the start
# (crossing and tfhooks do not import each other).
arm_fork_child = None


def where(skip: int = 1) -> str:
    """The innermost caller outside TensorFlow, Keras, the standard library's process modules, installed
    packages and the guard: `file:line in function` (the innermost frame of all when there is none)."""
    frame = user_frame(skip + 1)
    if frame is None:
        return "an unknown place"
    return f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}"


def user_frame(skip: int = 1, frame=None):
    """The innermost frame outside the libraries (from `frame`, default the caller's `skip` frames up)."""
    frame = frame or sys._getframe(skip + 1)
    first = None
    while frame is not None:
        if first is None:
            first = frame
        if _is_user(frame.f_code.co_filename):
            break
        frame = frame.f_back
    return frame or first


_STDLIB = os.path.dirname(os.__file__) + os.sep  # threading's waits, queue, runpy, ...


def _is_user(filename: str) -> bool:
    return not (filename.startswith(("<frozen", _STDLIB)) or any(part in filename for part in _LIBRARY_PARTS))


def cut_at_user_frame(tb) -> None:
    """End the traceback `tb` at its innermost frame outside the libraries: drop the library frames an
    error raised by a signal handler interrupted (a pool's wait) and the handler's own."""
    last = None
    while tb is not None:
        if _is_user(tb.tb_frame.f_code.co_filename):
            last = tb
        tb = tb.tb_next
    if last is not None:
        last.tb_next = None


def record(what: str, skip: int = 1, place: str | None = None) -> None:
    """The runtime started now (only the first start counts)."""
    global started
    if started is None:
        started = Start(what, place or where(skip + 1), time.time(), os.getpid())


def record_graph(what: str, skip: int = 1) -> None:
    """A TF1 graph was built now (only the first counts): TensorFlow started its graph-building thread."""
    global graph_built
    if graph_built is None:
        graph_built = Start(what, where(skip + 1), time.time(), os.getpid())


def start_text() -> str:
    """Where the runtime started, for messages: `... (in the parent, pid N, 3.1 s before the fork)`."""
    if started is None:
        return "TensorFlow's runtime has not started"
    text = f"TensorFlow's runtime started when {started.describe()}"
    if started.pid != os.getpid():
        text += f" (in process {started.pid}, {time.time() - started.at:.1f} s ago, before this process was forked)"
    return text
