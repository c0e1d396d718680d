"""A TF1 session sent to pool workers: pickling the task fails in the parent."""
import multiprocessing as mp

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {
    "quick": True,
    "rule": "TFP101",
    "kind": "bad",
    "expect": {"outcome": "exception", "type": "TypeError", "match": "cannot pickle", "where": "parent"},
    "timeout": 40,
}

WEIGHTS = np.random.default_rng(0).random((64, 2), dtype=np.float32)


def predict(sess, row):
    return sess.run("scores:0", {"rows:0": row[None]})[0]


def main():
    graph = tf.Graph()
    with graph.as_default():
        rows = tf.compat.v1.placeholder(tf.float32, [None, 64], name="rows")
        tf.matmul(rows, WEIGHTS, name="scores")
    sess = tf.compat.v1.Session(graph=graph)

    data = np.random.default_rng(1).random((6, 64), dtype=np.float32)
    with mp.Pool(2) as pool:
        scores = pool.starmap(predict, [(sess, row) for row in data])
    report(scores, data @ WEIGHTS)


if __name__ == "__main__":
    main()
