"""The parent creates a tf.distribute.MirroredStrategy (which creates the devices), then forks a
pool whose workers multiply 768x768 matrices."""
import multiprocessing as mp

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP201", "kind": "bad", "expect": {"outcome": "hang"}, "timeout": 40}


def matrix(seed):
    return np.random.default_rng(seed).random((768, 768), dtype=np.float32)


def square_sum(seed):
    m = tf.constant(matrix(seed))
    return float(tf.reduce_sum(tf.matmul(m, m)))


def main():
    strategy = tf.distribute.MirroredStrategy()
    print("replicas", strategy.num_replicas_in_sync)
    seeds = [1, 2, 3, 4]
    with mp.get_context("spawn").Pool(2) as pool:
        sums = pool.map(square_sum, seeds)
    report(sums, [float((matrix(s) @ matrix(s)).sum()) for s in seeds], rel_tol=1e-3)


if __name__ == "__main__":
    main()
