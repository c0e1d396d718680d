"""A traced `tf.function` passed to `joblib.Parallel(n_jobs=2)` tasks (default loky backend).

cloudpickle serialises the tf.function by value and fails on its FuncGraph; joblib raises
"Could not pickle the task to send it to the workers" in the parent.
"""
import numpy as np
import tensorflow as tf
from joblib import Parallel, delayed

from runtime_probe.support import report

PROBE = {
    "rule": "TFP102",
    "kind": "bad",
    "expect": {"outcome": "exception", "type": "PicklingError", "match": "Could not pickle the task",
               "where": "parent"},
    "timeout": 60,
}

SIZE = 512


def batch(seed):
    return np.random.default_rng(seed).random((SIZE, SIZE), dtype=np.float32)


@tf.function
def gram_total(rows):
    return tf.reduce_sum(tf.matmul(rows, rows, transpose_b=True))


def score(fn, rows):
    return float(fn(rows))


def main():
    print("parent", float(gram_total(batch(0))))
    seeds = [1, 2]
    totals = Parallel(n_jobs=2)(delayed(score)(gram_total, batch(seed)) for seed in seeds)
    report(totals, [float((batch(seed) @ batch(seed).T).sum()) for seed in seeds], rel_tol=1e-3)


if __name__ == "__main__":
    main()
