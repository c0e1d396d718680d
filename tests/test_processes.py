"""tests/processes.py, the harness every test's subprocess runs under: a hang is reported with every
process's stack and leaves nothing behind."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

import processes

# A parent that forks a child sleeping forever, then hangs itself waiting for it: the shape of the
# issue's hang (a parent waiting in pool.map, a forked child stuck), without TensorFlow.
FORK_AND_HANG = textwrap.dedent("""
    import os, sys, time

    def child_sleeps_forever():
        while True:
            time.sleep(60)

    def parent_waits_for_its_child(pid):
        os.waitpid(pid, 0)

    pid = os.fork()
    if pid == 0:
        child_sleeps_forever()
    print("forked", pid, "from", os.getpid())
    parent_waits_for_its_child(pid)
""")


def forked_pids(output: str) -> tuple[int, int]:
    words = output.split()
    return int(words[words.index("forked") + 1]), int(words[words.index("from") + 1])


@pytest.mark.slow
def test_a_hang_reports_every_processs_stack_and_leaves_nothing_behind():
    with pytest.raises(processes.Hang) as caught:
        processes.run([sys.executable, "-c", FORK_AND_HANG], capture_output=True, text=True, timeout=10)
    hang = caught.value
    assert isinstance(hang, subprocess.TimeoutExpired)  # call sites that catch subprocess.run's still do
    child, parent = forked_pids(hang.output)  # printed before the hang: the output is unbuffered
    report = str(hang)
    if processes.py_spy() is None:
        pytest.skip("py-spy is not installed (the `test` extra): no stacks to check")
    assert f"=== pid {parent} (" in report and f"=== pid {child} (parent {parent}, group {parent}, " in report, report
    assert "parent_waits_for_its_child (<string>:" in report, report  # py-spy's Python frames, per process
    assert "child_sleeps_forever (<string>:" in report, report
    alive = [pid for pid in (parent, child) if psutil.pid_exists(pid) and psutil.Process(pid).status() != "zombie"]
    assert alive == [], alive
    # A killed child whose parent died is a zombie until init reaps it: it runs nothing.
    group = [p.pid for p in psutil.process_iter() if _group(p.pid) == parent and not _zombie(p)]
    assert group == [], group


def _zombie(proc: psutil.Process) -> bool:
    try:
        return proc.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _group(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except OSError:
        return None


@pytest.mark.slow
def test_a_hang_reports_a_process_that_left_the_group_and_kills_it():
    # The child starts a session of its own: only the tree, taken before the kill, finds it.
    program = FORK_AND_HANG.replace("    child_sleeps_forever()", "    os.setsid()\n    child_sleeps_forever()")
    with pytest.raises(processes.Hang) as caught:
        processes.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=10)
    child, _ = forked_pids(caught.value.output)
    assert f"=== pid {child} (" in str(caught.value)
    assert not _alive(child)


@pytest.mark.slow
def test_a_program_that_ends_leaves_no_daemon_behind():
    program = textwrap.dedent("""
        import os, time
        if os.fork() == 0:
            os.close(1); os.close(2)  # lets the harness see the end of the output
            time.sleep(600)
        print("daemon", os.getpid())
    """)
    done = processes.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "daemon" in done.stdout
    leader = int(done.stdout.split()[1])
    deadline = time.monotonic() + 10
    while [p for p in psutil.process_iter() if _group(p.pid) == leader] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [p.pid for p in psutil.process_iter() if _group(p.pid) == leader] == []


def test_run_is_subprocess_runs_stand_in():
    done = processes.run([sys.executable, "-c", "import os, sys; print(os.environ['PYTHONUNBUFFERED'], "
                          "sys.stdin.read()); sys.exit(3)"], input="in", capture_output=True, text=True)
    assert isinstance(done, subprocess.CompletedProcess)
    assert (done.returncode, done.stdout) == (3, "1 in\n")
    with pytest.raises(subprocess.CalledProcessError):
        processes.run([sys.executable, "-c", "raise SystemExit(1)"], check=True)


def test_started_kills_a_server_at_exit():
    with processes.started([sys.executable, "-c", "import time; time.sleep(600)"]) as server:
        pid = server.pid
        assert _alive(pid)
    assert server.returncode == -9 and not _alive(pid)


def test_ended_kills_what_a_library_started():
    with processes.ended():
        orphan = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
        time.sleep(1)
    orphan.wait(timeout=30)
    assert orphan.returncode == -9


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


@pytest.mark.slow
def test_a_program_that_hangs_on_a_terminal_is_reported_the_same_way():
    primary, secondary = pty.openpty()
    try:
        with processes.started([sys.executable, "-c", "import time\nprint('ready')\ntime.sleep(600)"],
                               stdin=subprocess.DEVNULL, stdout=secondary, stderr=secondary) as proc:
            with pytest.raises(processes.Hang) as caught:
                processes.read_terminal(proc, primary, timeout=10)
    finally:
        os.close(primary)
        os.close(secondary)
    assert b"ready" in caught.value.output
    assert f"=== pid {proc.pid} (" in str(caught.value)
    assert proc.returncode == -9


def test_kill_group_ends_a_server_another_library_started():
    # pygls starts the language server (tests/lsp_editor.py): its group is ended from its psutil.Process.
    server = subprocess.Popen([sys.executable, "-c", FORK_AND_HANG], stdout=subprocess.PIPE, text=True,
                              start_new_session=True)
    child, _ = forked_pids(server.stdout.readline())
    processes.kill_group(psutil.Process(server.pid))
    assert server.wait(timeout=30) == -9 and not _alive(child)
    server.stdout.close()


def test_every_test_runs_its_programs_through_the_harness():
    """No test calls subprocess directly (a program it starts could hang the suite or outlive it)."""
    import ast

    direct = []
    for path in sorted(Path(__file__).parent.glob("*.py")):
        if path.name in ("processes.py", "test_processes.py"):  # the harness, and its tests against raw processes
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "subprocess"
                    and node.func.attr in ("run", "Popen", "call", "check_call", "check_output")):
                direct.append(f"{path.name}:{node.lineno}")
    assert direct == [], direct
