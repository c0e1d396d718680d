"""A TF1 Session stored in a `Manager().dict()` so that pool workers can look it up.

A manager proxy pickles every argument and sends it to the manager's server process; the
Session's Graph does not pickle, so the assignment itself raises in the parent.
"""
import multiprocessing as mp

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {
    "rule": "TFP101",
    "kind": "bad",
    "expect": {"outcome": "exception", "type": "TypeError", "match": "cannot pickle 'Graph' object", "where": "parent"},
    "timeout": 40,
}

SIZE = 512
WEIGHTS = np.random.default_rng(0).random((SIZE, SIZE), dtype=np.float32)


def batch(seed):
    return np.random.default_rng(seed).random((SIZE, SIZE), dtype=np.float32)


def score(registry, seed):
    return float(registry["scorer"].run("total:0", {"rows:0": batch(seed)}))


def main():
    graph = tf.Graph()
    with graph.as_default():
        rows = tf.compat.v1.placeholder(tf.float32, [None, SIZE], name="rows")
        tf.reduce_sum(tf.matmul(rows, WEIGHTS), name="total")
    sess = tf.compat.v1.Session(graph=graph)
    print("parent total", sess.run("total:0", {"rows:0": batch(0)}))

    seeds = [1, 2]
    with mp.Manager() as manager:
        registry = manager.dict()
        registry["scorer"] = sess
        with mp.Pool(2) as pool:
            totals = pool.starmap(score, [(registry, seed) for seed in seeds])
    report(totals, [float((batch(seed) @ WEIGHTS).sum()) for seed in seeds], rel_tol=1e-3)


if __name__ == "__main__":
    main()
