"""A first fork pool returns tf.Tensors; unpickling them in the parent runs an op (convert_to_tensor),
so the parent's runtime has started when the second fork pool's workers multiply 768x768 matrices."""
import multiprocessing as mp

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP201", "kind": "bad", "expect": {"outcome": "hang"}, "timeout": 40}


def matrix(seed):
    return np.random.default_rng(seed).random((768, 768), dtype=np.float32)


def as_tensor(seed):
    return tf.convert_to_tensor(matrix(seed))


def square_sum(seed):
    m = tf.constant(matrix(seed))
    return float(tf.reduce_sum(tf.matmul(m, m)))


def main():
    with mp.Pool(1) as pool:
        tensors = pool.map(as_tensor, [0])
    print("received", type(tensors[0]).__name__)
    seeds = [1, 2, 3, 4]
    with mp.get_context("spawn").Pool(2) as pool:
        sums = pool.map(square_sum, seeds)
    report(sums, [float((matrix(s) @ matrix(s)).sum()) for s in seeds], rel_tol=1e-3)


if __name__ == "__main__":
    main()
