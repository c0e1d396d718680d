"""`Process(target=self.serve)` where `self` holds a TF1 session: the forked child hangs in run."""
import multiprocessing as mp

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP103", "kind": "bad", "expect": {"outcome": "hang"}, "timeout": 30}

WEIGHTS = np.random.default_rng(0).random((64, 2), dtype=np.float32)


class Predictor:
    def __init__(self):
        graph = tf.Graph()
        with graph.as_default():
            rows = tf.compat.v1.placeholder(tf.float32, [None, 64], name="rows")
            tf.matmul(rows, WEIGHTS, name="scores")
        self.sess = tf.compat.v1.Session(graph=graph)

    def serve(self, data, results):
        results.put(self.sess.run("scores:0", {"rows:0": data}))

    def predict_all(self, data):
        results = mp.Queue()
        worker = mp.Process(target=self.serve, args=(data, results))
        worker.start()
        scores = results.get()
        worker.join()
        return scores


def main():
    data = np.random.default_rng(1).random((6, 64), dtype=np.float32)
    report(Predictor().predict_all(data), data @ WEIGHTS)


if __name__ == "__main__":
    main()
