"""A Dask cluster started at module level (TFP202): its spawned workers re-import the script and die, and
Dask fails by itself in the driver ("Nanny failed to start"). The guard must not fail later than that: a
worker's error raised in the middle of the cluster's start made Dask close a half-started cluster, which
waits out its time limits (the issue's 24.7 s against 11.5 s). It holds the error back until Dask's own
fails (alarm.deferred_call) and raises it chained to Dask's."""

from __future__ import annotations

import os
import sys
import textwrap
import time

import pytest

import processes
from conftest import run_env
from tfproc_lint.guard import alarm, errors

MESSAGE = "TFP202\tTFP202: spawned worker process 7 re-imports the main module (in worker process 7)"


@pytest.fixture
def listening(monkeypatch):
    """This process as a guarded parent whose alarm listens (without the signal handler: _on_signal is
    called directly, as the handler would be)."""
    for name, value in (("_installed", True), ("_delivered", False), ("_pending", None), ("_deferred", None),
                        ("_defer_depth", 0)):
        monkeypatch.setattr(alarm, name, value)
    woken = []
    monkeypatch.setattr(alarm, "_wake_in", woken.append)
    yield woken
    alarm._read(os.getpid())


def tell_me(text: str = MESSAGE) -> None:
    """What a worker's alarm.send leaves for this process, less the signal."""
    folder = alarm._folder(os.getpid())
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"7-{len(os.listdir(folder))}.txt"), "w", encoding="utf-8") as handle:
        handle.write(text)


def test_outside_a_deferred_call_a_workers_error_is_raised_at_once(listening):
    tell_me()
    with pytest.raises(errors.WorkerBootstrapError):
        alarm._on_signal(alarm.SIGNAL, None)


def test_a_workers_error_waits_for_the_dask_start_to_fail_and_is_raised_chained_to_dasks(listening):
    def start_cluster():
        tell_me()
        alarm._on_signal(alarm.SIGNAL, None)  # the signal comes while the cluster starts: held back
        raise RuntimeError("Nanny failed to start.")

    with pytest.raises(errors.WorkerBootstrapError) as caught:
        alarm.deferred_call(start_cluster)
    assert str(caught.value) == MESSAGE.partition("\t")[2]
    assert isinstance(caught.value.__cause__, RuntimeError) and "Nanny failed" in str(caught.value.__cause__)
    assert listening == [alarm.DEFER_S]  # a deadline was set in case Dask never fails


def test_a_start_that_neither_fails_nor_returns_gets_the_error_at_the_deadline(listening, monkeypatch):
    monkeypatch.setattr(alarm, "DEFER_S", 0.2)

    def hanging_start():
        tell_me()
        alarm._on_signal(alarm.SIGNAL, None)  # held back
        time.sleep(0.25)
        alarm._on_signal(alarm.SIGNAL, None)  # the deadline's signal (_wake_in)
        raise AssertionError("not reached")

    with pytest.raises(errors.WorkerBootstrapError):
        alarm.deferred_call(hanging_start)


def test_a_start_that_returns_after_a_workers_error_raises_it_then(listening):
    def start_cluster():
        tell_me()  # the signal's handler has not run yet
        return "cluster"

    with pytest.raises(errors.WorkerBootstrapError):
        alarm.deferred_call(start_cluster)
    assert alarm.deferred_call(lambda: "cluster") == "cluster"


def test_dasks_cluster_and_client_constructors_defer(monkeypatch):
    from tfproc_lint.guard import engines

    class SpecCluster:
        def __init__(self, n_workers=1):
            raise RuntimeError("Nanny failed to start.")

    class Client:
        def __init__(self, address=None):
            self.address = address

    engines.patch_dask(type("distributed", (), {"Client": Client, "SpecCluster": SpecCluster}))
    assert Client.__init__._tfproc_guard and SpecCluster.__init__._tfproc_guard
    assert Client("tcp://x").address == "tcp://x"
    with pytest.raises(RuntimeError, match="Nanny failed"):  # no worker's error: Dask's own, unchanged
        SpecCluster(2)


@pytest.mark.slow
@pytest.mark.parametrize("start", ["cluster = LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None)",
                                   "client = Client(n_workers=2, threads_per_worker=1, dashboard_address=None)"])
def test_a_module_level_dask_cluster_fails_with_tfp202_once_dask_itself_fails(tmp_path, start):
    pytest.importorskip("distributed")
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(f"""
        from dask.distributed import Client, LocalCluster

        {start}
        print("started")
    """), encoding="utf-8")
    proc = processes.run([sys.executable, "-m", "tfproc_lint.guard", str(script)], cwd=tmp_path, env=run_env(),
                         capture_output=True, text=True, timeout=240)
    assert proc.returncode == 1, proc.stderr[-3000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("tfproc_lint.guard.errors.WorkerBootstrapError: TFP202: spawned worker process"), last
    # Raised when Dask's start failed by itself (chained to its error), not in the middle of it (the handler).
    final = proc.stderr.rpartition("RuntimeError: Nanny failed to start.")[2]
    assert "The above exception was the direct cause of the following exception" in final, proc.stderr[-3000:]
    assert "in deferred_call" in final and "in _on_signal" not in final
