"""`joblib.Parallel(n_jobs=2, backend="multiprocessing")` after the parent ran an eager op.

The "multiprocessing" backend is a multiprocessing Pool with the default start method: fork on
Linux (Python < 3.14). The workers' 768x768 matmuls never return.
"""
import numpy as np
import tensorflow as tf
from joblib import Parallel, delayed

from runtime_probe.support import report

PROBE = {"rule": "TFP201", "kind": "bad", "expect": {"outcome": "hang"}, "timeout": 60}

SIZE = 768


def matrix(seed):
    return np.random.default_rng(seed).random((SIZE, SIZE), dtype=np.float32)


def square_sum(seed):
    m = tf.constant(matrix(seed))
    return float(tf.reduce_sum(tf.matmul(m, m)))


def main():
    print("parent checksum", float(tf.reduce_sum(tf.constant(matrix(0)))))
    seeds = [1, 2, 3, 4]
    sums = Parallel(n_jobs=2, backend="multiprocessing")(delayed(square_sum)(seed) for seed in seeds)
    report(sums, [float((matrix(s) @ matrix(s)).sum()) for s in seeds], rel_tol=1e-3)


if __name__ == "__main__":
    main()
