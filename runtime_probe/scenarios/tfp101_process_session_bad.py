"""A TF1 session passed to a forked Process: the child's `sess.run` never returns."""
import multiprocessing as mp

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP101", "kind": "bad", "expect": {"outcome": "hang"}, "timeout": 30}

WEIGHTS = np.random.default_rng(0).random((64, 2), dtype=np.float32)


def predict(sess, data, results):
    results.put(sess.run("scores:0", {"rows:0": data}))


def main():
    graph = tf.Graph()
    with graph.as_default():
        rows = tf.compat.v1.placeholder(tf.float32, [None, 64], name="rows")
        tf.matmul(rows, WEIGHTS, name="scores")
    sess = tf.compat.v1.Session(graph=graph)

    data = np.random.default_rng(1).random((6, 64), dtype=np.float32)
    results = mp.Queue()
    worker = mp.Process(target=predict, args=(sess, data, results))
    worker.start()
    scores = results.get()
    worker.join()
    report(scores, data @ WEIGHTS)


if __name__ == "__main__":
    main()
