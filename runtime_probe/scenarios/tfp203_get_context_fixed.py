"""The same helper, called twice, asks for `multiprocessing.get_context("spawn")` instead: works.

The twin of tfp203_set_start_method_twice_bad: a context object can be requested any number of
times and does not touch the global start method.
"""
import multiprocessing as mp

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"quick": True, "rule": "TFP203", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 150}

SIZE = 512


def matrix(seed):
    return np.random.default_rng(seed).random((SIZE, SIZE), dtype=np.float32)


def square_sum(seed):
    m = tf.constant(matrix(seed))
    return float(tf.reduce_sum(tf.matmul(m, m)))


def run_parallel(seeds):
    ctx = mp.get_context("spawn")
    with ctx.Pool(2) as pool:
        return pool.map(square_sum, seeds)


def main():
    first = run_parallel([1, 2])
    second = run_parallel([3, 4])
    seeds = [1, 2, 3, 4]
    report(first + second, [float((matrix(s) @ matrix(s)).sum()) for s in seeds], rel_tol=1e-3)


if __name__ == "__main__":
    main()
