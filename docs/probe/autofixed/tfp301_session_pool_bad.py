"""The pool callable builds a TF1 graph and session on every task."""
import multiprocessing as mp
import time

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {
    "rule": "TFP301",
    "kind": "bad",
    "expect": {"outcome": "ok", "slower_than": {"scenario": "tfp301_session_pool_fixed", "factor": 3}},
    "timeout": 60,
}

RNG = np.random.default_rng(0)
W1 = RNG.random((64, 256), dtype=np.float32) / 8
W2 = RNG.random((256, 256), dtype=np.float32) / 16
W3 = RNG.random((256, 2), dtype=np.float32) / 16


_sess = None


def _init_predict():
    global _sess
    graph = tf.Graph()
    with graph.as_default():
        rows = tf.compat.v1.placeholder(tf.float32, [None, 64], name="rows")
        hidden = tf.nn.relu(tf.matmul(rows, W1))
        hidden = tf.nn.relu(tf.matmul(hidden, W2))
        tf.matmul(hidden, W3, name="scores")
    _sess = tf.compat.v1.Session(graph=graph)


def predict(row):
    return _sess.run("scores:0", {"rows:0": row[None]})[0]


def main():
    data = np.random.default_rng(1).random((200, 64), dtype=np.float32)
    with mp.Pool(2, initializer=_init_predict) as pool:
        pool.map(predict, data[:2])  # warm-up
        start = time.perf_counter()
        scores = pool.map(predict, data)
        elapsed = time.perf_counter() - start
    expected = np.maximum(np.maximum(data @ W1, 0) @ W2, 0) @ W3
    report(scores, expected, tasks_per_s=len(data) / elapsed)


if __name__ == "__main__":
    main()
