"""The parent runs an eager 512x512 matmul, then forks a ProcessPoolExecutor doing the same."""
import multiprocessing
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP201", "kind": "bad", "expect": {"outcome": "hang"}, "timeout": 30}


def matrix(seed):
    return np.random.default_rng(seed).random((512, 512), dtype=np.float32)


def square_sum(seed):
    m = tf.constant(matrix(seed))
    return float(tf.reduce_sum(tf.matmul(m, m)))


def main():
    print("parent", square_sum(0))
    seeds = [1, 2, 3, 4]
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as executor:
        sums = list(executor.map(square_sum, seeds))
    report(sums, [float((matrix(s) @ matrix(s)).sum()) for s in seeds])


if __name__ == "__main__":
    main()
