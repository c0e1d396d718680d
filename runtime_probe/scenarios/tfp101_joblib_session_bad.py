"""A TF1 Session passed to `joblib.Parallel(n_jobs=2)` tasks (default loky backend).

loky starts fresh worker interpreters and sends tasks with cloudpickle; the Session's Graph does
not pickle. joblib reports it in the parent as "Could not pickle the task to send it to the
workers", raised from the worker-side `TypeError: cannot pickle 'Graph' object`.
"""
import numpy as np
import tensorflow as tf
from joblib import Parallel, delayed

from runtime_probe.support import report

PROBE = {
    "rule": "TFP101",
    "kind": "bad",
    "expect": {"outcome": "exception", "type": "PicklingError", "match": "Could not pickle the task",
               "where": "parent"},
    "timeout": 60,
}

SIZE = 512
WEIGHTS = np.random.default_rng(0).random((SIZE, SIZE), dtype=np.float32)


def batch(seed):
    return np.random.default_rng(seed).random((SIZE, SIZE), dtype=np.float32)


def score(sess, rows):
    return float(sess.run("total:0", {"rows:0": rows}))


def main():
    graph = tf.Graph()
    with graph.as_default():
        rows = tf.compat.v1.placeholder(tf.float32, [None, SIZE], name="rows")
        tf.reduce_sum(tf.matmul(rows, WEIGHTS), name="total")
    sess = tf.compat.v1.Session(graph=graph)
    print("parent total", sess.run("total:0", {"rows:0": batch(0)}))

    seeds = [1, 2]
    totals = Parallel(n_jobs=2)(delayed(score)(sess, batch(seed)) for seed in seeds)
    report(totals, [float((batch(seed) @ WEIGHTS).sum()) for seed in seeds], rel_tol=1e-3)


if __name__ == "__main__":
    main()
