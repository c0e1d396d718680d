"""Each pool worker builds its own TF1 session in `initializer=`; tasks carry only data."""
import multiprocessing as mp

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"quick": True, "rule": "TFP101", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 40}

WEIGHTS = np.random.default_rng(0).random((64, 2), dtype=np.float32)
sess = None


def start_session():
    global sess
    graph = tf.Graph()
    with graph.as_default():
        rows = tf.compat.v1.placeholder(tf.float32, [None, 64], name="rows")
        tf.matmul(rows, WEIGHTS, name="scores")
    sess = tf.compat.v1.Session(graph=graph)


def predict(row):
    return sess.run("scores:0", {"rows:0": row[None]})[0]


def main():
    data = np.random.default_rng(1).random((6, 64), dtype=np.float32)
    with mp.Pool(2, initializer=start_session) as pool:
        scores = pool.map(predict, data)
    report(scores, data @ WEIGHTS)


if __name__ == "__main__":
    main()
