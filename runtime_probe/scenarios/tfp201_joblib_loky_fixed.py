"""`joblib.Parallel(n_jobs=2)` (default loky backend) after the parent ran an eager op: works.

The twin of tfp201_joblib_multiprocessing_backend_bad: loky workers are fresh interpreters, so
the parent's runtime does not matter; the workers import TensorFlow themselves.
"""
import numpy as np
import tensorflow as tf
from joblib import Parallel, delayed

from runtime_probe.support import report

PROBE = {"rule": "TFP201", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 90}

SIZE = 768


def matrix(seed):
    return np.random.default_rng(seed).random((SIZE, SIZE), dtype=np.float32)


def square_sum(seed):
    m = tf.constant(matrix(seed))
    return float(tf.reduce_sum(tf.matmul(m, m)))


def main():
    print("parent checksum", float(tf.reduce_sum(tf.constant(matrix(0)))))
    seeds = [1, 2, 3, 4]
    sums = Parallel(n_jobs=2)(delayed(square_sum)(seed) for seed in seeds)
    report(sums, [float((matrix(s) @ matrix(s)).sum()) for s in seeds], rel_tol=1e-3)


if __name__ == "__main__":
    main()
