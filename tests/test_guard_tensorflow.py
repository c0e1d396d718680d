"""The runtime guard with real TensorFlow (CPU): one guarded program per test, each checking several
things in order, since every process pays TensorFlow's import."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from conftest import run_env

pytestmark = pytest.mark.tensorflow
pytest.importorskip("tensorflow")


def guarded(tmp_path, source: str, timeout: float = 300):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(source), encoding="utf-8")
    env = run_env()
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    return subprocess.run([sys.executable, "-m", "tfproc_lint.guard", str(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=timeout, start_new_session=True)


def line_of(tmp_path, text: str) -> int:
    lines = (tmp_path / "prog.py").read_text(encoding="utf-8").splitlines()
    return next(number for number, line in enumerate(lines, start=1) if text in line)


def test_fork_after_the_runtime_started(tmp_path):
    proc = guarded(tmp_path, """
        import multiprocessing as mp
        import warnings

        import numpy as np
        import tensorflow as tf

        def tf1_session_sum(_):  # a child that builds and runs its own graph
            graph = tf.Graph()
            with graph.as_default():
                total = tf.reduce_sum(tf.ones((4, 4)))
            with tf.compat.v1.Session(graph=graph) as sess:
                return float(sess.run(total))

        def numpy_sum(seed):
            return float(np.random.default_rng(seed).random((256, 256)).sum() > 0)

        def tf_sum(seed):
            m = tf.constant(np.ones((256, 256), dtype=np.float32))
            return float(tf.reduce_sum(tf.matmul(m, m)))

        if __name__ == "__main__":
            fork = mp.get_context("fork")
            graph = tf.Graph()
            with graph.as_default():  # a TF1 graph without a Session does not start the runtime
                tf.compat.v1.placeholder(tf.float32, [None, 4])
            with fork.Pool(2) as pool:
                print("graph only:", pool.map(tf1_session_sum, [1, 2]))
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
    """)
    out = proc.stdout
    assert "graph only: [16.0, 16.0]" in out, proc.stderr[-3000:]
    assert "parent: 3.0" in out
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
    assert "TFP102: a TensorFlow or Keras object, unpickled here, was sent" in last, proc.stderr[-3000:]
    assert "was sent to a forked worker and used there (TFP201 too)" in last
