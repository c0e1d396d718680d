"""A helper that calls `multiprocessing.set_start_method("spawn")`, called twice.

Typical when two entry points (say, `train()` and `evaluate()`) each "make sure" of the start
method: the second call raises `RuntimeError: context has already been set` in the parent.
"""
import multiprocessing as mp

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {
    "quick": True,
    "rule": "TFP203",
    "kind": "bad",
    "expect": {"outcome": "exception", "type": "RuntimeError", "match": "context has already been set",
               "where": "parent"},
    "timeout": 120,
}

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
