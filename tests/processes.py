"""Run the tests' subprocesses so that none can hang the suite or outlive its test.

Every command runs in a new session (a process group of its own) with unbuffered Python output and
faulthandler on, under a time limit. When the limit passes, the stacks of every process of the run
(the program, each of its descendants, and any other member of its group) are taken with
`py-spy dump --native` (Python and native frames: a child hung inside TensorFlow's executor shows
there, where faulthandler shows nothing), then the whole group, and each descendant that left it,
is killed and reaped, and `Hang` (a `subprocess.TimeoutExpired`) is raised with the stacks and the
output so far in its message. When the command ends by itself, whatever it left running in its
group is killed too, so that nothing outlives the test.

    run(argv, timeout=..., **subprocess.run's arguments) -> subprocess.CompletedProcess
    with started(argv, **Popen's arguments) as proc:    # servers, editors: the group dies at exit
        out, err = finish(proc, timeout)               # communicate() under the same limit and report
        text = read_terminal(proc, primary, timeout)   # the same for output to a pseudo-terminal
    with ended():                                      # processes started by a library (a kernel)
        ...                                            # descendants left at exit are killed
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import psutil

DEFAULT_TIMEOUT = 300.0  # seconds; generous: the machine running the suite may be loaded
DUMP_TIMEOUT = 60.0  # for one py-spy dump (a process with TensorFlow's threads takes a few seconds)
KILL_WAIT = 30.0  # for the killed processes to go and the pipes to close
TAIL = 4000  # characters of each output stream shown with a hang


def env_for(env: dict | None = None) -> dict:
    """`env` (or this process's environment) with unbuffered output and faulthandler in Python programs."""
    env = dict(os.environ if env is None else env)
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONFAULTHANDLER"] = "1"
    return env


def py_spy() -> str | None:
    beside = Path(sys.executable).parent / "py-spy"
    return str(beside) if beside.exists() else shutil.which("py-spy")


class Hang(subprocess.TimeoutExpired):
    """A command ran past its limit; `stacks` holds every process's stack at that moment."""

    def __init__(self, cmd, timeout: float, output=None, stderr=None, stacks: str = "") -> None:
        super().__init__(cmd, timeout, output, stderr)
        self.stacks = stacks

    def __str__(self) -> str:
        return "\n".join([
            f"{super().__str__()} Every process of its group was killed; their stacks before that:",
            self.stacks,
            f"--- its stdout (the last {TAIL} characters):", _tail(self.output),
            f"--- its stderr (the last {TAIL} characters):", _tail(self.stderr),
        ])


def _tail(stream) -> str:
    if stream is None:
        return "(not captured)"
    if isinstance(stream, bytes):
        stream = stream.decode("utf-8", "replace")
    return stream[-TAIL:]


def run(args, *, timeout: float = DEFAULT_TIMEOUT, input=None, capture_output: bool = False, check: bool = False,
        **kwargs) -> subprocess.CompletedProcess:
    """`subprocess.run` in a process group of its own, under `timeout`; on a hang, raises `Hang` with
    every process's stack, after killing them all."""
    if capture_output:
        if "stdout" in kwargs or "stderr" in kwargs:
            raise ValueError("stdout and stderr arguments may not be used with capture_output")
        kwargs["stdout"] = kwargs["stderr"] = subprocess.PIPE
    if input is not None:
        kwargs["stdin"] = subprocess.PIPE
    with started(args, **kwargs) as proc:
        stdout, stderr = finish(proc, timeout, input)
    completed = subprocess.CompletedProcess(args, proc.returncode, stdout, stderr)
    if check:
        completed.check_returncode()
    return completed


@contextmanager
def started(args, **kwargs):
    """`subprocess.Popen` in a new session, with `env_for`'s environment; at exit, however the block
    ends, every process of its group and every descendant still running is killed and reaped."""
    kwargs["env"] = env_for(kwargs.get("env"))
    kwargs["start_new_session"] = True
    proc = subprocess.Popen(args, **kwargs)
    try:
        yield proc
    finally:
        end(proc)


def finish(proc: subprocess.Popen, timeout: float, input=None):
    """`proc.communicate(input, timeout)`; past the limit, take every process's stack, kill them all
    and raise `Hang` with the stacks and the output so far."""
    try:
        return proc.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired:
        hang(proc, timeout)


def read_terminal(proc: subprocess.Popen, primary: int, timeout: float = DEFAULT_TIMEOUT) -> bytes:
    """What `proc` writes to the pseudo-terminal whose primary side is `primary`, until the terminal
    closes; past `timeout`, `hang` with what it wrote so far."""
    deadline = time.monotonic() + timeout
    chunks = []
    while True:
        ready, _, _ = select.select([primary], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            hang(proc, timeout, b"".join(chunks))
        try:
            data = os.read(primary, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks)


def hang(proc: subprocess.Popen, timeout: float, output=None):
    """Take the stacks of every process of `proc`'s run, kill them all, and raise `Hang` with the
    stacks and the output so far (`output`, or what its pipes still hold)."""
    shown = dump(proc.pid)
    kill(proc)
    stdout = stderr = None
    if proc.stdout is not None or proc.stderr is not None:
        try:
            stdout, stderr = proc.communicate(timeout=KILL_WAIT)
        except (subprocess.TimeoutExpired, ValueError, OSError):
            pass
    print(f"tests/processes.py: {proc.args!r} ran past {timeout:g} s; the stacks of its processes:\n{shown}",
          file=sys.stderr, flush=True)
    raise Hang(proc.args, timeout, stdout if output is None else output, stderr, shown) from None


def members(pid: int, leader: bool = True) -> list[psutil.Process]:
    """The processes of the run that `pid` leads: itself and its descendants (unless `leader` is false:
    it was reaped, and its pid may name another process now), and any other process still in its group
    (a daemon whose parent died: it keeps the group's id, and so the pid, from being reused)."""
    found: dict[int, psutil.Process] = {}
    if leader:
        try:
            found[pid] = psutil.Process(pid)
            found.update((p.pid, p) for p in found[pid].children(recursive=True))
        except psutil.Error:
            pass
    for proc in psutil.process_iter():
        try:
            if proc.pid not in found and os.getpgid(proc.pid) == pid:
                found[proc.pid] = proc
        except (OSError, psutil.Error):
            continue
    return [p for p in found.values() if _running(p)]


def _running(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def dump(pid: int) -> str:
    """Every process of the run: who it is, and its Python and native stacks (py-spy)."""
    return stacks(members(pid))


def stacks(procs) -> str:
    spy = py_spy()
    parts = []
    for proc in procs:
        parts.append(_describe(proc))
        if spy is None:
            parts.append("  (no stack: py-spy is not installed; `pip install py-spy`, the `test` extra, shows "
                         "every process's Python and native stack here)")
            continue
        try:
            shown = subprocess.run([spy, "dump", "--native", "--pid", str(proc.pid)], capture_output=True,
                                   text=True, errors="replace", timeout=DUMP_TIMEOUT, stdin=subprocess.DEVNULL)
            text = shown.stdout if shown.returncode == 0 else \
                f"(py-spy could not read its stack: {(shown.stderr or shown.stdout).strip().splitlines()[:1]})"
        except subprocess.TimeoutExpired:
            text = f"(py-spy took more than {DUMP_TIMEOUT:g} s)"
        parts.append("\n".join("  " + line for line in text.rstrip().splitlines()))
    return "\n".join(parts) if parts else "(no process of the group was running)"


def _describe(proc: psutil.Process) -> str:
    try:
        with proc.oneshot():
            return (f"=== pid {proc.pid} (parent {proc.ppid()}, group {os.getpgid(proc.pid)}, {proc.status()}): "
                    f"{' '.join(proc.cmdline())[:300]}")
    except (OSError, psutil.Error):
        return f"=== pid {proc.pid} (gone)"


def end(proc: subprocess.Popen) -> list[str]:
    """`kill`, then close `proc`'s pipes."""
    try:
        return kill(proc)
    finally:
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass


def kill(proc: subprocess.Popen) -> list[str]:
    """Kill the group `proc` leads and every descendant that left it (and the groups those lead), and
    reap `proc`. Returns a description of each process but `proc` that was still running."""
    left = _kill_run(proc.pid, proc.poll() is None)  # not reaped: its pid, and its group's id, are still ours
    proc.wait(timeout=KILL_WAIT)
    return left


def kill_group(leader: psutil.Process) -> list[str]:
    """`kill` for a process that another library started in a session of its own (pygls's language
    server), known by its psutil.Process (which tells a reused pid); that library reaps it."""
    return _kill_run(leader.pid, _running(leader) or _zombie(leader))


def _zombie(proc: psutil.Process) -> bool:
    try:
        return proc.status() == psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _kill_run(pid: int, leader: bool) -> list[str]:
    found = members(pid, leader)  # before anything is killed: a killed parent's children are reparented
    left = [_describe(p) for p in found if p.pid != pid]
    groups = set()
    for member in found:
        try:
            if os.getpgid(member.pid) == member.pid:  # a descendant that leads a group (a session of its own)
                groups.add(member.pid)
        except OSError:
            continue
    if leader:
        groups.add(pid)
    for group in groups:
        try:
            os.killpg(group, signal.SIGKILL)
        except OSError:
            pass
    for member in found:
        try:
            member.send_signal(signal.SIGKILL)
        except psutil.Error:
            pass
    _wait_gone([p for p in found if p.pid != pid])  # the leader is reaped by its starter
    return left


@contextmanager
def ended(poll_s: float = 0.5):
    """For processes a library starts (a Jupyter kernel and its pool): while the block runs, the
    descendants of this process are sampled; at exit each one seen that still runs is killed, with
    the members of the groups they lead (a pool worker whose kernel died keeps the kernel's group).
    If the block raised, their stacks are printed first."""
    me = psutil.Process()
    before = {p.pid for p in me.children(recursive=True)}
    seen: dict[int, psutil.Process] = {}
    stop = threading.Event()

    def sample() -> None:
        while True:
            try:
                seen.update((p.pid, p) for p in me.children(recursive=True) if p.pid not in before)
            except psutil.Error:
                pass
            if stop.wait(poll_s):
                return

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    failed = False
    try:
        yield
    except BaseException:
        failed = True
        raise
    finally:
        stop.set()
        sampler.join()
        sample_now = [p for p in me.children(recursive=True) if p.pid not in before]
        seen.update((p.pid, p) for p in sample_now)
        _end_seen(list(seen.values()), show=failed)


def _end_seen(seen: list[psutil.Process], show: bool) -> None:
    leaders = []
    for proc in seen:
        try:
            if os.getpgid(proc.pid) == proc.pid and _running(proc):
                leaders.append(proc.pid)
        except OSError:
            continue
    found = {p.pid: p for p in seen if _running(p)}
    for leader in leaders:
        found.update((p.pid, p) for p in members(leader))
    if show and found:
        print("tests/processes.py: processes still running after the failure, with their stacks:\n"
              + stacks(found.values()),
              file=sys.stderr, flush=True)
    for proc in found.values():
        try:
            proc.send_signal(signal.SIGKILL)
        except psutil.Error:
            pass
    _wait_gone(found.values())


def _wait_gone(procs) -> None:
    """Wait until each process has ended (a zombie counts as ended), reaping none: a child's Popen
    must still get its return code."""
    deadline = time.monotonic() + KILL_WAIT
    procs = list(procs)
    while any(_running(p) for p in procs) and time.monotonic() < deadline:
        time.sleep(0.05)
