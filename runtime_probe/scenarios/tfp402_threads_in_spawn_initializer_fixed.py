"""One intra-op thread per worker, set in a spawn pool's `initializer`, after a parent op: works.

The twin of tfp402_threads_in_fork_initializer_bad: a spawned worker is a fresh interpreter whose
runtime has not started, so the initializer's setting is accepted before the worker's first op.
"""
import multiprocessing as mp

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP402", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 90}

SIZE = 512


def matrix(seed):
    return np.random.default_rng(seed).random((SIZE, SIZE), dtype=np.float32)


def one_thread_each():
    tf.config.threading.set_intra_op_parallelism_threads(1)


def square_sum(seed):
    m = tf.constant(matrix(seed))
    return float(tf.reduce_sum(tf.matmul(m, m))), tf.config.threading.get_intra_op_parallelism_threads()


def main():
    print("parent checksum", float(tf.reduce_sum(tf.constant(matrix(0)))))
    seeds = [1, 2, 3, 4]
    with mp.get_context("spawn").Pool(2, initializer=one_thread_each) as pool:
        results = pool.map(square_sum, seeds)
    report(results, [(float((matrix(s) @ matrix(s)).sum()), 1) for s in seeds], rel_tol=1e-3)


if __name__ == "__main__":
    main()
