"""The parent calls `tf.config.list_physical_devices()` before a fork pool: harmless.

Physical devices are discovered without creating the runtime's devices or thread pools, so
the forked workers' 768x768 matmuls work (the near miss of tfp201_list_logical_devices_bad).
"""
import multiprocessing as mp

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP201", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 60}

SIZE = 768


def matrix(seed):
    return np.random.default_rng(seed).random((SIZE, SIZE), dtype=np.float32)


def square_sum(seed):
    m = tf.constant(matrix(seed))
    return float(tf.reduce_sum(tf.matmul(m, m)))


def main():
    print("physical devices:", tf.config.list_physical_devices())
    seeds = [1, 2, 3, 4]
    with mp.get_context("fork").Pool(2) as pool:
        sums = pool.map(square_sum, seeds)
    report(sums, [float((matrix(s) @ matrix(s)).sum()) for s in seeds], rel_tol=1e-3)


if __name__ == "__main__":
    main()
