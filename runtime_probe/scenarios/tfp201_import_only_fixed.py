"""The parent only imports TensorFlow and builds a graph (no session), then forks a pool: fine."""
import multiprocessing as mp

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP201", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 40}


def matrix(seed):
    return np.random.default_rng(seed).random((512, 512), dtype=np.float32)


def square_sum(seed):
    m = tf.constant(matrix(seed))
    return float(tf.reduce_sum(tf.matmul(m, m)))


def main():
    graph = tf.Graph()
    with graph.as_default():
        tf.reduce_sum(tf.constant(matrix(0)))
    seeds = [1, 2, 3, 4]
    with mp.Pool(2) as pool:
        sums = pool.map(square_sum, seeds)
    report(sums, [float((matrix(s) @ matrix(s)).sum()) for s in seeds])


if __name__ == "__main__":
    main()
