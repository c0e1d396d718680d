"""The parent runs an op on the GPU, then forks pool workers that use the GPU.

Reported (tensorflow/tensorflow#57877, #41450): the child fails with CUDA_ERROR_NOT_INITIALIZED
and aborts; the pool loses the task and never returns.
"""
import multiprocessing as mp

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP201", "kind": "bad", "gpus": 1, "expect": {"outcome": "lost task"}, "timeout": 90}


def matrix(seed):
    return np.random.default_rng(seed).random((256, 256), dtype=np.float32)


def square_sum(seed):
    with tf.device("/GPU:0"):
        m = tf.constant(matrix(seed))
        return float(tf.reduce_sum(tf.matmul(m, m)))


def _init_gpu_memory():
    for gpu in tf.config.list_physical_devices("GPU"):
        tf.config.experimental.set_memory_growth(gpu, True)


def main():
    print("parent", square_sum(0))
    seeds = [1, 2]
    with mp.get_context("spawn").Pool(2, initializer=_init_gpu_memory) as pool:
        sums = pool.map(square_sum, seeds)
    report(sums, [float((matrix(s) @ matrix(s)).sum()) for s in seeds], rel_tol=1e-3)


if __name__ == "__main__":
    main()
