"""runtime_probe/fork_hazard.py: how a run is judged and cleaned up, and the figures the messages cite."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

psutil = pytest.importorskip("psutil")

from runtime_probe import fork_hazard  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

# A program that forks a child, says it started its pool, and then both wait forever without CPU: a hang.
STUCK = ("import os, time\n"
         "child = os.fork()\n"
         "if child:\n"
         "    print('FORK_HAZARD_STAGE pool_started', flush=True)\n"
         "time.sleep(600)\n")
DONE = "print('FORK_HAZARD_STAGE done'); print('FORK_HAZARD_RESULT {\"threads\": {\"done\": [\"python\"]}}')"


@pytest.mark.slow
def test_a_program_that_waits_without_cpu_is_a_hang_and_its_processes_are_killed():
    run = fork_hazard.run_once("graph", limit_s=2, command=[sys.executable, "-c", STUCK])
    assert run.outcome == "hang"
    assert run.last_stage == "pool_started"
    assert run.leftovers == []
    assert "--- pid" in run.evidence  # the stacks (or wait channels) of both processes
    pids = [int(line.split()[2]) for line in run.evidence.splitlines() if line.startswith("--- pid ")]
    assert len(set(pids)) == 2
    assert not [pid for pid in pids if psutil.pid_exists(pid) and psutil.Process(pid).status() != "zombie"]


def test_a_program_that_prints_its_result_is_ok():
    run = fork_hazard.run_once("graph", limit_s=30, command=[sys.executable, "-c", DONE])
    assert (run.outcome, run.last_stage, run.threads) == ("ok", "done", {"done": ["python"]})


def test_the_messages_cite_the_committed_measurement():
    """TFP201's finding and the guard's warning quote the per-program, loaded `graph` figures of
    docs/probe/fork-hazard.json (knowledge/tensorflow.py's GRAPH_FORK_RATE, which both import)."""
    from tfproc_lint.knowledge.tensorflow import GRAPH_FORK_RATE

    doc = json.loads((ROOT / "docs" / "probe" / "fork-hazard.json").read_text(encoding="utf-8"))
    assert fork_hazard.rate_text(doc) == GRAPH_FORK_RATE
