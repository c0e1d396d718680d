"""The runtime guard on a fork after TF1 graph building (TFP201 as a warning): with real TensorFlow (CPU).

Building a tf.Graph starts a thread of TensorFlow's that a forked child does not get; a child that then
starts the runtime almost always works and rarely hangs (docs/probe/fork-hazard.md). The guard warns in
the child, before its first session or op, and lets it go on.

Deterministic: no child runs a graph or an op. A child forked after the parent built a graph, about to
create a Session on it, has replaced `warnings.showwarning` with a function that writes the warning to a
file and ends the process: it stops inside the guard's warning, before TensorFlow creates the session, so
the measured hang (a child stuck in its session's run) cannot happen; the test checks the warning, not
the child's luck. A child forked before the parent built its graph creates a session of its own (never
runs it) unwarned, and a child that runs only numpy is not warned.
"""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

import processes
from conftest import run_env

pytestmark = pytest.mark.tensorflow
pytest.importorskip("tensorflow")

PROGRAM = """
    import json
    import multiprocessing as mp
    import os
    import warnings

    import numpy as np
    import tensorflow as tf


    def stop_at_the_warning(message, category, filename, lineno, file=None, line=None):
        from tfproc_lint.guard import state

        record = {"category": category.__name__, "where": f"{os.path.basename(filename)}:{lineno}",
                  "message": str(message), "runtime_started": state.started is not None}
        with open(f"warned-{os.getpid()}.json", "w") as out:
            json.dump(record, out)
        os._exit(0)  # before TensorFlow creates the session: this child runs no TensorFlow


    def session_child(graph=None):
        warnings.showwarning = stop_at_the_warning
        graph = graph or tf.Graph()  # the early child builds its own graph
        tf.compat.v1.Session(graph=graph)  # the child's session
        os._exit(3)  # reached only without a warning


    def numpy_child():
        warnings.showwarning = stop_at_the_warning
        print("numpy child:", float(np.ones((64, 64)).sum()), flush=True)


    if __name__ == "__main__":
        fork = mp.get_context("fork")
        early = fork.Process(target=session_child)  # forked before the parent builds a graph
        early.start()
        early.join(120)
        graph = tf.Graph()  # the parent's graph
        with graph.as_default():
            rows = tf.compat.v1.placeholder(tf.float32, [None, 4])
        late = fork.Process(target=session_child, args=(graph,))
        numpy_only = fork.Process(target=numpy_child)
        for child in (late, numpy_only):
            child.start()
            child.join(120)
        exits = {"early": early.exitcode, "late": late.exitcode, "numpy": numpy_only.exitcode}
        print("exits:", json.dumps(exits), flush=True)
"""


def test_a_child_forked_after_graph_building_is_warned_before_its_session(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(PROGRAM), encoding="utf-8")
    env = run_env()
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    proc = processes.run([sys.executable, "-m", "tfproc_lint.guard", str(script)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # early: made its session unwarned (3); late: stopped at the warning (0); numpy: done (0)
    assert 'exits: {"early": 3, "late": 0, "numpy": 0}' in proc.stdout, proc.stdout + proc.stderr[-3000:]
    assert "numpy child: 4096.0" in proc.stdout
    warned = [json.loads(path.read_text()) for path in tmp_path.glob("warned-*.json")]
    assert len(warned) == 1, warned  # the late session child only
    lines = script.read_text().splitlines()
    graph_line = next(n for n, line in enumerate(lines, 1) if "the parent's graph" in line)
    session_line = next(n for n, line in enumerate(lines, 1) if "the child's session" in line)
    record = warned[0]
    assert record["category"] == "GuardWarning"
    assert record["where"] == f"prog.py:{session_line}"  # the user's line that starts the runtime
    assert record["runtime_started"] is False  # warned before the session was created
    message = record["message"]
    assert message.startswith("TFP201: a tf.compat.v1.Session starts TensorFlow's runtime in process "), message
    assert "after a TF1 graph was built at " in message and f"prog.py:{graph_line} in <module>" in message
    assert "can hang, rarely (" in message and "the program goes on" in message
    assert "Fix: start the workers with the spawn" in message
