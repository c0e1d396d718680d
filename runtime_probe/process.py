"""Run one command in its own process group under a time limit, and leave nothing behind.

While it runs, its descendants are tracked with psutil: which ones exited while the main
process kept running (a pool worker that died), and whether the whole tree stopped using CPU
(a silent hang). Afterwards every process of its group, and every descendant seen, must be gone;
stragglers are killed and reported.

The limit counts time as the run's processes had the machine (clock.py): on a busy machine it
stretches with the measured load, up to MAX_STRETCH times. Once the command prints its result line
(`done_marker`), what is left is its exit: it gets EXIT_LIMIT_S more, still ended early if it stops
using CPU, so that a slow teardown (TensorFlow's takes about a second of CPU) is not called a hang.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field

import psutil

from .clock import RunClock

POLL_S = 0.1
CLOCK_POLL_S = 0.5  # how often the load is measured (it reads every thread's scheduler statistics)
MAX_STRETCH = 10.0  # the most a busy machine stretches a limit
EXIT_LIMIT_S = 30.0  # counted seconds a run has to end once it printed its result
IDLE_CPU_S = 0.05  # CPU seconds the whole tree must use to count as progress
EXIT_GRACE_S = 3.0  # time for helpers (resource tracker, forkserver) and killed processes to go

_interrupted = threading.Event()


@dataclass
class ProcessRun:
    returncode: int | None
    stdout: str
    stderr: str
    duration_s: float
    killed: str | None = None  # "timeout", "exit", "idle" or "interrupted" when the probe had to stop it
    vanished: list[str] = field(default_factory=list)  # workers that exited before the main process
    leftovers: list[str] = field(default_factory=list)  # processes still alive afterwards (killed)
    stretch: float = 1.0  # wall time over counted time: how much the machine's load slowed the run
    exit_s: float | None = None  # wall seconds from the result line to the main process's end (seen while it ran)


class _Tree:
    """Samples the process tree under `pid`: members seen, CPU used, workers that vanished."""

    def __init__(self, pid: int):
        self.root = psutil.Process(pid)
        self.exe = _exe(self.root)
        self.seen: dict[int, psutil.Process] = {}
        self.python_samples: dict[int, int] = {}  # samples that saw the pid running our interpreter
        self.names: dict[int, str] = {}
        self.cpu: dict[int, float] = {}
        self.gone: set[int] = set()
        self.running: set[int] = set()  # members alive at the last sample
        self.vanished: list[str] = []
        self.progress_cpu = 0.0
        self.progress_at = time.monotonic()

    def sample(self) -> None:
        try:
            members = [self.root, *self.root.children(recursive=True)]
        except psutil.Error:
            return
        self.running = running = set()
        for proc in members:
            self.seen.setdefault(proc.pid, proc)
            try:
                if proc.status() == psutil.STATUS_ZOMBIE:
                    continue
                times = proc.cpu_times()
            except psutil.Error:
                continue
            running.add(proc.pid)
            self.cpu[proc.pid] = times.user + times.system
            if _exe(proc) == self.exe:
                self.python_samples[proc.pid] = self.python_samples.get(proc.pid, 0) + 1
                self.names.setdefault(proc.pid, _describe(proc))
        for pid, proc in self.seen.items():
            # A worker runs our interpreter and lives a while; a helper caught between fork and
            # exec (subprocess running ldconfig, ...) looks like one only for an instant.
            if pid in running or pid in self.gone or pid == self.root.pid or self.python_samples.get(pid, 0) < 2:
                continue
            if not _alive([proc]):
                self.gone.add(pid)
                self.vanished.append(self.names[pid])
        total = sum(self.cpu.values())
        if total - self.progress_cpu > IDLE_CPU_S:
            self.progress_cpu, self.progress_at = total, time.monotonic()

    def idle_for(self) -> float:
        return time.monotonic() - self.progress_at


def _exe(proc: psutil.Process) -> str | None:
    try:
        return proc.exe()
    except psutil.Error:
        return None


def _group_members(pgid: int) -> list[psutil.Process]:
    members = []
    for proc in psutil.process_iter():
        try:
            if os.getpgid(proc.pid) == pgid and proc.status() != psutil.STATUS_ZOMBIE:
                members.append(proc)
        except (OSError, psutil.Error):
            continue
    return members


def _alive(procs) -> list[psutil.Process]:
    result = []
    for proc in procs:
        try:
            if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                result.append(proc)
        except psutil.Error:
            continue
    return result


def _groups(pgid: int, seen: dict[int, psutil.Process]) -> set[int]:
    """Our process group and the groups of the descendants still alive (a Jupyter kernel runs in a
    session of its own, with its pool workers). Only live processes seen in the tree vouch for a
    group (psutil checks that a pid still names the same process), so no stranger's is touched."""
    groups = {pgid}
    for proc in _alive(seen.values()):
        try:
            groups.add(os.getpgid(proc.pid))
        except OSError:
            continue
    return groups


def _stragglers(pgid: int, seen: dict[int, psutil.Process]) -> list[psutil.Process]:
    found = {p.pid: p for p in _alive(seen.values())}
    for group in _groups(pgid, seen):
        found.update((p.pid, p) for p in _group_members(group))
    return list(found.values())


def _describe(proc: psutil.Process) -> str:
    try:
        return f"pid {proc.pid}: {' '.join(proc.cmdline())[:120]}"
    except psutil.Error:
        return f"pid {proc.pid}"


def _kill(procs) -> None:
    for proc in procs:
        try:
            proc.send_signal(signal.SIGKILL)
        except psutil.Error:
            pass


def interrupt_all() -> None:
    """Kill every run in progress, from any thread (Ctrl-C): nothing may outlive the probe."""
    _interrupted.set()


def clear_interrupt() -> None:
    _interrupted.clear()


def execute(argv, *, timeout: float, idle_s: float | None = None, cwd=None, env=None,
            done_marker: str | None = None) -> ProcessRun:
    """Run `argv` in a new session; kill its whole group after `timeout` counted seconds, or after
    `idle_s` without CPU. Once a line of its output begins with `done_marker`, the limit is EXIT_LIMIT_S
    counted seconds from that line instead."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.monotonic()
        proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
            cwd=cwd, env=env, start_new_session=True,
        )
        tree, clock = _Tree(proc.pid), RunClock(start)
        result = _Marker(out.fileno(), done_marker) if done_marker else None
        result_at = None  # (wall, counted) time when the result line was seen
        killed = None
        try:
            while proc.poll() is None and not killed:
                tree.sample()
                now = time.monotonic()
                if now - clock.last >= CLOCK_POLL_S:
                    clock.advance(tree.running, now)
                if result_at is None and result is not None and result.seen():
                    result_at = (now, clock.counted)
                killed = _why_stop(now - start, clock.counted, timeout, result_at, idle_s and tree.idle_for() > idle_s)
                if not killed:
                    time.sleep(POLL_S)
        finally:  # also on KeyboardInterrupt in this thread
            if killed or proc.poll() is None:
                _kill_tree(proc.pid, tree.seen)
            proc.wait()
        end = time.monotonic()
        leftovers = _sweep(proc.pid, tree.seen, EXIT_GRACE_S * min(clock.stretch(), MAX_STRETCH))
        out.seek(0)
        err.seek(0)
        return ProcessRun(
            returncode=proc.returncode,
            stdout=out.read().decode("utf-8", "replace"),
            stderr=err.read().decode("utf-8", "replace"),
            duration_s=end - start,
            killed=killed,
            vanished=tree.vanished,
            leftovers=leftovers,
            stretch=round(clock.stretch(), 2),
            exit_s=None if result_at is None else round(end - result_at[0], 2),
        )


def _why_stop(wall: float, counted: float, timeout: float, result_at, idle: bool) -> str | None:
    """Why to stop a run now, if it must be stopped: "timeout", "exit", "idle" or "interrupted"."""
    if result_at is None:
        if counted > timeout or wall > timeout * MAX_STRETCH:
            return "timeout"
    elif counted - result_at[1] > EXIT_LIMIT_S or wall - result_at[0] > EXIT_LIMIT_S * MAX_STRETCH:
        return "exit"
    if idle:
        return "idle"
    if _interrupted.is_set():
        return "interrupted"
    return None


class _Marker:
    """Watches a run's output file for a line that begins with a marker, reading each byte once."""

    def __init__(self, fd: int, marker: str):
        self.fd = fd
        self.needle = b"\n" + marker.encode()
        self.offset = 0
        self.tail = b"\n"  # what precedes the unread part: the start of the file begins a line
        self.found = False

    def seen(self) -> bool:
        while not self.found:
            chunk = os.pread(self.fd, 1 << 16, self.offset)
            if not chunk:
                break
            self.offset += len(chunk)
            text = self.tail + chunk
            self.found = self.needle in text
            self.tail = text[-len(self.needle):]
        return self.found


def _kill_tree(pgid: int, seen: dict[int, psutil.Process]) -> None:
    for group in _groups(pgid, seen):  # ours first: it is always there
        try:
            os.killpg(group, signal.SIGKILL)
        except OSError:
            pass
    _kill(_alive(seen.values()))  # descendants that left the group


def _sweep(pgid: int, seen: dict[int, psutil.Process], grace_s: float) -> list[str]:
    """Kill and describe whatever of the run is still alive after a short grace period."""
    deadline = time.monotonic() + grace_s
    stragglers = _stragglers(pgid, seen)
    while stragglers and time.monotonic() < deadline:
        time.sleep(POLL_S)
        stragglers = _stragglers(pgid, seen)
    described = [_describe(p) for p in stragglers]
    _kill(stragglers)
    psutil.wait_procs(stragglers, timeout=EXIT_GRACE_S)
    return described
