"""The runtime guard with real TensorFlow (CPU): one guarded program per test, each checking several
things in order, since every process pays TensorFlow's import."""

from __future__ import annotations

import os
import re
import sys
import textwrap

import pytest

import processes
from conftest import run_env

pytestmark = pytest.mark.tensorflow
pytest.importorskip("tensorflow")


def guarded(tmp_path, source: str, timeout: float = 300):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(source), encoding="utf-8")
    env = run_env()
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    return processes.run([sys.executable, "-m", "tfproc_lint.guard", str(script)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=timeout)


def line_of(tmp_path, text: str) -> int:
    lines = (tmp_path / "prog.py").read_text(encoding="utf-8").splitlines()
    return next(number for number, line in enumerate(lines, start=1) if text in line)


# Forks only after the runtime started, so every child either runs no TensorFlow or is stopped by the
# guard at its first op: deterministic (tests/test_guard_stress.py runs it repeatedly under load).
FORK_AFTER_START = """
        import multiprocessing as mp
        import warnings

        import numpy as np
        import tensorflow as tf

        def numpy_sum(seed):
            return float(np.random.default_rng(seed).random((256, 256)).sum() > 0)

        def tf_sum(seed):
            m = tf.constant(np.ones((256, 256), dtype=np.float32))
            return float(tf.reduce_sum(tf.matmul(m, m)))

        if __name__ == "__main__":
            fork = mp.get_context("fork")
            print("parent:", float(tf.reduce_sum(tf.constant([1.0, 2.0]))))  # the runtime starts
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                import os
                os.environ["TF_NUM_INTRAOP_THREADS"] = "1"
            print("warned:", [str(w.message).split(":")[0] for w in caught])
            try:
                tf.config.threading.set_intra_op_parallelism_threads(1)
            except RuntimeError as exc:
                print("refused:", exc)
            with fork.Pool(2) as pool:
                print("numpy children:", pool.map(numpy_sum, [1, 2]))
            with fork.Pool(2) as pool:
                print(pool.map(tf_sum, [1, 2]))
"""


def test_fork_after_the_runtime_started(tmp_path):
    check_fork_after_start(tmp_path, guarded(tmp_path, FORK_AFTER_START))


def check_fork_after_start(tmp_path, proc) -> None:
    out = proc.stdout
    assert "parent: 3.0" in out, proc.stderr[-3000:]
    assert "warned: ['TFP403']" in out
    assert "refused: TFP402: tf.config.threading set_intra_op_parallelism_threads() after TensorFlow's runtime " \
           "started when the eager context was initialised" in out
    start = "prog.py:{} in <module>".format(line_of(tmp_path, 'print("parent:"'))
    assert start in out.split("refused:")[1]
    assert "numpy children: [1.0, 1.0]" in out
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert "ForkAfterStartError: TFP201: an op ran in process" in last, proc.stderr[-3000:]
    assert "after TensorFlow's runtime started when the eager context was initialised" in last
    assert start in last and "Fix: start the workers with the spawn" in last


def test_a_keras_model_sent_to_forked_workers_is_tfp102(tmp_path):
    proc = guarded(tmp_path, """
        import multiprocessing as mp

        import keras
        import numpy as np

        def predict(model, rows):
            return model.predict(rows, verbose=0).tolist()

        if __name__ == "__main__":
            model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
            rows = np.ones((2, 4), dtype=np.float32)
            print(model.predict(rows, verbose=0).shape)
            with mp.get_context("fork").Pool(2) as pool:
                print(pool.starmap(predict, [(model, rows)]))
    """)
    assert proc.returncode == 1
    assert "(2, 2)" in proc.stdout
    last = proc.stderr.strip().splitlines()[-1]
    # Raised in the parent, where the task is pickled: the workers never get it, the pool's caller at once.
    assert "TFP102Error: TFP102: a Keras model (keras.src.models.sequential.Sequential) is sent through a Pool " \
           "task" in last, proc.stderr[-3000:]
    assert "to pool workers forked after TensorFlow's runtime started when the eager context was initialised" in last
    assert "Fix for TFP201:" in last


def test_costly_worker_patterns_warn_and_change_nothing(tmp_path):
    # Spawned workers, each importing TensorFlow itself: a fork after the parent only imported it, with
    # children that run TensorFlow, can hang now and then (issue 34), a spawned worker cannot.
    proc = guarded(tmp_path, """
        import multiprocessing as mp
        import os
        import sys

        import numpy as np
        import tensorflow as tf

        PATH = os.path.join(os.getcwd(), "m.keras")
        model = None

        def save():
            m = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(4), tf.keras.layers.Dense(1)])
            m.save(PATH)

        def load():
            global model
            model = tf.keras.models.load_model(PATH)

        def load_and_predict(row):
            return float(tf.keras.models.load_model(PATH).predict_on_batch(row[None])[0, 0])

        def predict_row(row):
            return float(model.predict_on_batch(row[None])[0, 0])

        def predict_chunk(rows):
            return model.predict_on_batch(rows)[:, 0].tolist()

        def session_task(x):
            graph = tf.Graph()
            with graph.as_default():
                scale = tf.compat.v1.placeholder(tf.float32, [])
                total = tf.reduce_sum(tf.ones((4, 4)) * scale)
            with tf.compat.v1.Session(graph=graph) as sess:
                return float(sess.run(total, {scale: x}))

        def phase(name):
            print(f"--- {name}", file=sys.stderr, flush=True)

        if __name__ == "__main__":
            spawn = mp.get_context("spawn")
            saver = spawn.Process(target=save)
            saver.start()
            saver.join()
            rows = np.random.default_rng(0).random((120, 8), dtype=np.float32)
            phase("load per task")
            with spawn.Pool(2) as pool:
                print(len(pool.map(load_and_predict, rows[:6], chunksize=1)))
            phase("session per task")
            with spawn.Pool(2) as pool:
                print(sum(pool.map(session_task, range(6), chunksize=1)))
            phase("initializer, a few rows, chunks")
            with spawn.Pool(2, initializer=load) as pool:
                print(len(pool.map(predict_row, rows[:6], chunksize=1)))
                print(len(pool.map(predict_chunk, np.array_split(rows, 4), chunksize=1)))
            phase("one row per task")
            with spawn.Pool(1, initializer=load) as pool:
                print(len(pool.map(predict_row, rows)))
            phase("Pool() with a model per worker")
            with spawn.Pool(initializer=load) as pool:
                print(len(pool.map(predict_chunk, np.array_split(rows, 4))))
            phase("end")
    """, timeout=600)  # ten spawned workers import TensorFlow: 254 s at a load average of 17 on 2 cores
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["6", "240.0", "6", "4", "120", "4"]
    phases = dict(part.split("\n", 1) for part in proc.stderr.split("--- ")[1:])
    codes = {name: sorted(set(re.findall(r"GuardWarning: (TFP\d+): ", text))) for name, text in phases.items()}
    assert codes == {"load per task": ["TFP301"], "session per task": ["TFP301"],
                     "initializer, a few rows, chunks": [], "one row per task": ["TFP303"],
                     "Pool() with a model per worker": ["TFP302"], "end": []}, proc.stderr[-3000:]
    assert "built the Keras model '" in phases["load per task"] and "again in task 2 (first built in task 1)" \
        in phases["load per task"]
    assert "a tf.compat.v1.Session over the same graph" in phases["session per task"]
    assert "on one row at a time 100 times" in phases["one row per task"]
    assert f"a pool made without a worker count ({os.cpu_count()} workers, one per CPU)" \
        in phases["Pool() with a model per worker"]


PYDATASET_FIT = """
import multiprocessing as mp

import keras
import numpy as np


class Rows(keras.utils.PyDataset):
    def __len__(self):
        return 4

    def __getitem__(self, index):
        x = np.random.default_rng(index).random((16, 4), dtype=np.float32)
        return x, x.sum(axis=1, keepdims=True)


SET_START_METHOD
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
model.compile("sgd", "mse")
model.fit(Rows(workers=2, use_multiprocessing=True), epochs=1, verbose=0)
print("trained")
"""
GUARD = "import sys, tfproc_lint.guard.__main__ as guard; sys.exit(guard.main(['prog.py']))"


@pytest.mark.parametrize(("how", "code", "at"), [
    # each spawned worker re-imports the script and dies at its set_start_method
    ("script sets spawn", "TFP202", 'mp.set_start_method("spawn")'),
    # as under Python 3.14's forkserver default: the worker re-imports the script and its own fit starts processes
    ("start method set before the script runs", "TFP202", "model.fit("),
    # a notebook-like main module (python -c): workers cannot find the dataset's class
    ("dataset class in an unimportable main module", "TFP204", None),
])
def test_keras_data_workers_under_spawn_fail_with_the_rule_instead_of_hanging(tmp_path, how, code, at):
    # Without the guard each of these waits forever inside `fit` (TensorFlow's native code).
    from runtime_probe import process

    statement = 'mp.set_start_method("spawn")' if how != "start method set before the script runs" else ""
    (tmp_path / "prog.py").write_text(PYDATASET_FIT.replace("SET_START_METHOD", statement), encoding="utf-8")
    launcher = {"script sets spawn": GUARD,
                "start method set before the script runs": "import multiprocessing as mp; mp.set_start_method("
                                                           "'spawn'); " + GUARD,
                "dataset class in an unimportable main module": "import tfproc_lint.guard as guard; "
                                                                "guard.install(); exec(open('prog.py').read())"}[how]
    env = run_env()
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    run = process.execute([sys.executable, "-c", launcher], timeout=300, cwd=tmp_path, env=env)
    err = run.stderr
    assert run.returncode == 1 and not run.killed, err[-3000:]
    assert "trained" not in run.stdout
    assert err.count("tfproc-guard (pid ") == 1, err[-3000:]  # once, from the first worker that failed
    told = next(line for line in err.splitlines() if line.startswith("tfproc-guard (pid "))
    if code == "TFP202":
        assert "TFP202: spawned worker process" in told
        assert f"(at {tmp_path / 'prog.py'}:{line_of(tmp_path, at)})" in told, told
    else:
        assert "TFP204: worker process" in told and "cannot find Rows, which it was sent, in the main module" in told
    assert err.count(f"{code}: ") >= 2  # ... and raised in the parent, through TensorFlow's error
    assert run.leftovers == []
