"""A bound method of an object holding a TF1 session used as the pool callable."""
import multiprocessing as mp

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {
    "quick": True,
    "rule": "TFP103",
    "kind": "bad",
    "expect": {"outcome": "exception", "type": "TypeError", "match": "cannot pickle", "where": "parent"},
    "timeout": 40,
}

WEIGHTS = np.random.default_rng(0).random((64, 2), dtype=np.float32)


class Predictor:
    def __init__(self):
        graph = tf.Graph()
        with graph.as_default():
            rows = tf.compat.v1.placeholder(tf.float32, [None, 64], name="rows")
            tf.matmul(rows, WEIGHTS, name="scores")
        self.sess = tf.compat.v1.Session(graph=graph)

    def predict(self, row):
        return self.sess.run("scores:0", {"rows:0": row[None]})[0]

    def predict_all(self, data):
        with mp.Pool(2) as pool:
            return pool.map(self.predict, data)


def main():
    data = np.random.default_rng(1).random((6, 64), dtype=np.float32)
    report(Predictor().predict_all(data), data @ WEIGHTS)


if __name__ == "__main__":
    main()
