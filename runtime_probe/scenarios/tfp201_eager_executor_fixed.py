"""The parent runs an eager 512x512 matmul, then starts the executor from a spawn context."""
import multiprocessing
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP201", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 60}


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
