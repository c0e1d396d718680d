"""The parent calls `tf.config.list_logical_devices()` before a fork pool: that starts the runtime.

Logical devices exist only once the runtime is initialised, so listing them initialises it;
the forked workers' 768x768 matmuls never return.
"""
import multiprocessing as mp

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP201", "kind": "bad", "expect": {"outcome": "hang"}, "timeout": 40}

SIZE = 768


def matrix(seed):
    return np.random.default_rng(seed).random((SIZE, SIZE), dtype=np.float32)


def square_sum(seed):
    m = tf.constant(matrix(seed))
    return float(tf.reduce_sum(tf.matmul(m, m)))


def main():
    print("logical devices:", tf.config.list_logical_devices())
    seeds = [1, 2, 3, 4]
    with mp.get_context("fork").Pool(2) as pool:
        sums = pool.map(square_sum, seeds)
    report(sums, [float((matrix(s) @ matrix(s)).sum()) for s in seeds], rel_tol=1e-3)


if __name__ == "__main__":
    main()
