"""The guard's TensorFlow fork scenario (test_guard_tensorflow.py) run again and again, two guarded
programs at a time next to a CPU hog, each under tests/processes.py's time limit: none may hang
(issue 34: a fork after a TF1 graph built without a Session hung now and then under load), and every
run must give the expected output. TFPROC_STRESS_RUNS sets the number of runs; the default keeps the
test at about 2 minutes on a loaded 2-core machine."""

from __future__ import annotations

import contextlib
import os
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import processes

pytestmark = pytest.mark.tensorflow
pytest.importorskip("tensorflow")

from test_guard_tensorflow import FORK_AFTER_START, check_fork_after_start, guarded  # noqa: E402

RUNS = int(os.environ.get("TFPROC_STRESS_RUNS", "4"))
LIMIT_S = 240  # one run takes 10 to 40 s on a loaded 2-core machine; a hang waits for ever
HOG = "while True:\n    pass\n"  # one busy core, as another job on the machine would be


def test_the_guards_fork_scenario_never_hangs_two_at_a_time_next_to_a_cpu_hog(tmp_path, pytestconfig):
    capture = pytestconfig.pluginmanager.getplugin("capturemanager")
    lock = threading.Lock()  # the runs finish in two threads

    def say(line: str) -> None:  # a line per run on the terminal, past pytest's capture: minutes go by
        with lock, capture.global_and_fixture_disabled() if capture else contextlib.nullcontext():
            print(line, file=sys.stderr, flush=True)

    def one(number: int) -> tuple[int, str, str, float]:
        folder = tmp_path / f"run{number}"
        folder.mkdir()
        started = time.monotonic()
        try:
            proc = guarded(folder, FORK_AFTER_START, timeout=LIMIT_S)
            check_fork_after_start(folder, proc)
            outcome, detail = "ok", ""
        except processes.Hang as hang:
            outcome, detail = "hang", str(hang)
        except AssertionError as wrong:
            outcome, detail = "wrong", f"{wrong}\n--- stdout:\n{proc.stdout[-2000:]}\n--- stderr:\n" \
                                       f"{proc.stderr[-3000:]}"
        seconds = time.monotonic() - started
        say(f"stress run {number + 1}/{RUNS}: {outcome} in {seconds:.1f} s")
        return number, outcome, detail, seconds

    with processes.started([sys.executable, "-c", HOG]) as hog:
        with ThreadPoolExecutor(2) as pool:
            results = list(pool.map(one, range(RUNS)))
        assert hog.poll() is None  # the hog ran all along
    outcomes = [outcome for _, outcome, _, _ in results]
    say(f"stress: {RUNS} runs, {outcomes.count('hang')} hung, {outcomes.count('wrong')} wrong; median "
        f"{statistics.median(s for *_, s in results):.1f} s a run")
    failed = [f"run {number + 1}: {outcome}\n{detail}" for number, outcome, detail, _ in results if outcome != "ok"]
    assert not failed, "\n\n".join(failed)
