"""The forked Process builds its own TF1 session; the parent only imported TensorFlow."""
import multiprocessing as mp

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP101", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 40}

WEIGHTS = np.random.default_rng(0).random((64, 2), dtype=np.float32)


def predict(data, results):
    graph = tf.Graph()
    with graph.as_default():
        rows = tf.compat.v1.placeholder(tf.float32, [None, 64], name="rows")
        tf.matmul(rows, WEIGHTS, name="scores")
    with tf.compat.v1.Session(graph=graph) as sess:
        results.put(sess.run("scores:0", {"rows:0": data}))


def main():
    data = np.random.default_rng(1).random((6, 64), dtype=np.float32)
    results = mp.Queue()
    worker = mp.Process(target=predict, args=(data, results))
    worker.start()
    scores = results.get()
    worker.join()
    report(scores, data @ WEIGHTS)


if __name__ == "__main__":
    main()
