"""The parent runs a TF1 session, then forks a pool whose workers multiply 512x512 matrices."""
import multiprocessing as mp

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"quick": True, "rule": "TFP201", "kind": "bad", "expect": {"outcome": "hang"}, "timeout": 30}


def matrix(seed):
    return np.random.default_rng(seed).random((512, 512), dtype=np.float32)


def square_sum(seed):
    m = tf.constant(matrix(seed))
    return float(tf.reduce_sum(tf.matmul(m, m)))


def main():
    graph = tf.Graph()
    with graph.as_default():
        total = tf.reduce_sum(tf.constant(matrix(0)))
    with tf.compat.v1.Session(graph=graph) as sess:
        print("parent total", sess.run(total))

    seeds = [1, 2, 3, 4]
    with mp.get_context("spawn").Pool(2) as pool:
        sums = pool.map(square_sum, seeds)
    report(sums, [float((matrix(s) @ matrix(s)).sum()) for s in seeds])


if __name__ == "__main__":
    main()
