"""A `get_context("spawn").Pool` at module level, with no `if __name__ == "__main__":` guard.

No global start method is set, so the workers get past that line; but re-importing the script runs
the module-level Pool again inside each worker, which multiprocessing refuses during bootstrapping
("An attempt has been made to start a new process before the current process has finished its
bootstrapping phase"). Workers die and are replaced; `map` never returns.
"""
import multiprocessing as mp

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP202", "kind": "bad", "expect": {"outcome": "lost task"}, "timeout": 40}

SIZE = 512


def matrix(seed):
    return np.random.default_rng(seed).random((SIZE, SIZE), dtype=np.float32)


def square_sum(seed):
    m = tf.constant(matrix(seed))
    return float(tf.reduce_sum(tf.matmul(m, m)))


seeds = [1, 2, 3, 4]
if __name__ == "__main__":
    with mp.get_context("spawn").Pool(2) as pool:
        sums = pool.map(square_sum, seeds)
    report(sums, [float((matrix(s) @ matrix(s)).sum()) for s in seeds], rel_tol=1e-3)
