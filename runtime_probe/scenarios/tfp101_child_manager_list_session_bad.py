"""A loader child builds a TF1 session and appends it to a `Manager().list()` for the parent.

The proxy pickles what is appended to send it to the manager's server process. The Session's
Graph does not pickle: `append` raises in the child, which dies, and the parent finds nothing.
"""
import multiprocessing as mp
import sys

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {
    "rule": "TFP101",
    "kind": "bad",
    "expect": {"outcome": "exception", "type": "TypeError", "match": "cannot pickle 'Graph' object", "where": "worker"},
    "timeout": 60,
}

SIZE = 512
WEIGHTS = np.random.default_rng(0).random((SIZE, SIZE), dtype=np.float32)


def batch(seed):
    return np.random.default_rng(seed).random((SIZE, SIZE), dtype=np.float32)


def load(shared):
    graph = tf.Graph()
    with graph.as_default():
        rows = tf.compat.v1.placeholder(tf.float32, [None, SIZE], name="rows")
        tf.reduce_sum(tf.matmul(rows, WEIGHTS), name="total")
    sess = tf.compat.v1.Session(graph=graph)
    shared.append(sess)


def main():
    with mp.Manager() as manager:
        shared = manager.list()
        loader = mp.Process(target=load, args=(shared,))
        loader.start()
        loader.join()
        if loader.exitcode != 0:
            sys.exit(f"the loader failed (exit code {loader.exitcode})")
        sess = shared[0]
        total = float(sess.run("total:0", {"rows:0": batch(1)}))
    report(total, float((batch(1) @ WEIGHTS).sum()), rel_tol=1e-3)


if __name__ == "__main__":
    main()
