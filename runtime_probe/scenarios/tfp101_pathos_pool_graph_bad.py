"""A `tf.Graph` sent to `pathos.multiprocessing.Pool` tasks through `starmap`.

`pathos.multiprocessing.Pool` is `multiprocess`'s pool (dill), not pathos's own `ProcessingPool`.
dill cannot pickle a Graph either: the pool's task handler fails in the parent and `starmap`
re-raises it.
"""
import numpy as np
import pathos.multiprocessing as pmp
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


def build_graph():
    graph = tf.Graph()
    with graph.as_default():
        rows = tf.compat.v1.placeholder(tf.float32, [None, SIZE], name="rows")
        tf.reduce_sum(tf.matmul(rows, WEIGHTS), name="total")
    return graph


def score(graph, seed):
    with tf.compat.v1.Session(graph=graph) as sess:
        return float(sess.run("total:0", {"rows:0": batch(seed)}))


def main():
    graph = build_graph()
    seeds = [1, 2]
    pool = pmp.Pool(2)
    try:
        totals = pool.starmap(score, [(graph, seed) for seed in seeds])
    finally:
        pool.close()
        pool.join()
    report(totals, [float((batch(seed) @ WEIGHTS).sum()) for seed in seeds], rel_tol=1e-3)


if __name__ == "__main__":
    main()
