"""The first fork pool returns numpy arrays, so the parent never runs an op and the second fork pool
works."""
import multiprocessing as mp

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP201", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 60}


def matrix(seed):
    return np.random.default_rng(seed).random((768, 768), dtype=np.float32)


def as_tensor(seed):
    return tf.convert_to_tensor(matrix(seed)).numpy()


def square_sum(seed):
    m = tf.constant(matrix(seed))
    return float(tf.reduce_sum(tf.matmul(m, m)))


def main():
    with mp.Pool(1) as pool:
        tensors = pool.map(as_tensor, [0])
    print("received", type(tensors[0]).__name__)
    seeds = [1, 2, 3, 4]
    with mp.Pool(2) as pool:
        sums = pool.map(square_sum, seeds)
    report(sums, [float((matrix(s) @ matrix(s)).sum()) for s in seeds], rel_tol=1e-3)


if __name__ == "__main__":
    main()
