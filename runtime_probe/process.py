"""Run one command in its own process group under a hard time limit, and leave nothing behind.

While it runs, its descendants are tracked with psutil: which ones exited while the main
process kept running (a pool worker that died), and whether the whole tree stopped using CPU
(a silent hang). Afterwards every process of its group, and every descendant seen, must be gone;
stragglers are killed and reported.
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

POLL_S = 0.1
IDLE_CPU_S = 0.05  # CPU seconds the whole tree must use to count as progress
EXIT_GRACE_S = 3.0  # time for helpers (resource tracker, forkserver) and killed processes to go

_interrupted = threading.Event()


@dataclass
class ProcessRun:
    returncode: int | None
    stdout: str
    stderr: str
    duration_s: float
    killed: str | None = None  # "timeout", "idle" or "interrupted" when the probe had to stop it
    vanished: list[str] = field(default_factory=list)  # workers that exited before the main process
    leftovers: list[str] = field(default_factory=list)  # processes still alive afterwards (killed)


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
        self.vanished: list[str] = []
        self.progress_cpu = 0.0
        self.progress_at = time.monotonic()

    def sample(self) -> None:
        try:
            members = [self.root, *self.root.children(recursive=True)]
        except psutil.Error:
            return
        running = set()
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


def execute(argv, *, timeout: float, idle_s: float | None = None, cwd=None, env=None) -> ProcessRun:
    """Run `argv` in a new session; kill its whole group on `timeout` or after `idle_s` without CPU."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.monotonic()
        proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
            cwd=cwd, env=env, start_new_session=True,
        )
        tree = _Tree(proc.pid)
        killed = None
        try:
            while proc.poll() is None and not killed:
                tree.sample()
                if time.monotonic() - start > timeout:
                    killed = "timeout"
                elif idle_s and tree.idle_for() > idle_s:
                    killed = "idle"
                elif _interrupted.is_set():
                    killed = "interrupted"
                else:
                    time.sleep(POLL_S)
        finally:  # also on KeyboardInterrupt in this thread
            if killed or proc.poll() is None:
                _kill_tree(proc.pid, tree.seen)
            proc.wait()
        duration = time.monotonic() - start
        leftovers = _sweep(proc.pid, tree.seen)
        out.seek(0)
        err.seek(0)
        return ProcessRun(
            returncode=proc.returncode,
            stdout=out.read().decode("utf-8", "replace"),
            stderr=err.read().decode("utf-8", "replace"),
            duration_s=duration,
            killed=killed,
            vanished=tree.vanished,
            leftovers=leftovers,
        )


def _kill_tree(pgid: int, seen: dict[int, psutil.Process]) -> None:
    for group in _groups(pgid, seen):  # ours first: it is always there
        try:
            os.killpg(group, signal.SIGKILL)
        except OSError:
            pass
    _kill(_alive(seen.values()))  # descendants that left the group


def _sweep(pgid: int, seen: dict[int, psutil.Process]) -> list[str]:
    """Kill and describe whatever of the run is still alive after a short grace period."""
    deadline = time.monotonic() + EXIT_GRACE_S
    stragglers = _stragglers(pgid, seen)
    while stragglers and time.monotonic() < deadline:
        time.sleep(POLL_S)
        stragglers = _stragglers(pgid, seen)
    described = [_describe(p) for p in stragglers]
    _kill(stragglers)
    psutil.wait_procs(stragglers, timeout=EXIT_GRACE_S)
    return described
