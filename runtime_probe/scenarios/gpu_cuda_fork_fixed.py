"""The parent runs an op on the GPU, then starts GPU workers from a spawn context.

Each worker turns on memory growth first, so the two workers and the parent share the GPU (TFP401).
"""
import multiprocessing as mp

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP201", "kind": "fixed", "gpus": 1, "expect": {"outcome": "ok"}, "timeout": 90}


def matrix(seed):
    return np.random.default_rng(seed).random((256, 256), dtype=np.float32)


def grow_memory():
    for gpu in tf.config.list_physical_devices("GPU"):
        tf.config.experimental.set_memory_growth(gpu, True)


def square_sum(seed):
    with tf.device("/GPU:0"):
        m = tf.constant(matrix(seed))
        return float(tf.reduce_sum(tf.matmul(m, m)))


def main():
    print("parent", square_sum(0))
    seeds = [1, 2]
    with mp.get_context("spawn").Pool(2, initializer=grow_memory) as pool:
        sums = pool.map(square_sum, seeds)
    report(sums, [float((matrix(s) @ matrix(s)).sum()) for s in seeds], rel_tol=1e-3)


if __name__ == "__main__":
    main()
