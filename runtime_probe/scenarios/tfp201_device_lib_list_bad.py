"""The parent lists its devices with device_lib before a fork pool: that starts the runtime.

`device_lib.list_local_devices()` looks like a harmless query, but it creates the devices and
their thread pools; the forked workers' 768x768 matmuls never return.
"""
import multiprocessing as mp

import numpy as np
import tensorflow as tf
from tensorflow.python.client import device_lib

from runtime_probe.support import report

PROBE = {"quick": True, "rule": "TFP201", "kind": "bad", "expect": {"outcome": "hang"}, "timeout": 40}

SIZE = 768


def matrix(seed):
    return np.random.default_rng(seed).random((SIZE, SIZE), dtype=np.float32)


def square_sum(seed):
    m = tf.constant(matrix(seed))
    return float(tf.reduce_sum(tf.matmul(m, m)))


def main():
    devices = device_lib.list_local_devices()
    print("devices:", [d.name for d in devices])
    seeds = [1, 2, 3, 4]
    with mp.get_context("fork").Pool(2) as pool:
        sums = pool.map(square_sum, seeds)
    report(sums, [float((matrix(s) @ matrix(s)).sum()) for s in seeds], rel_tol=1e-3)


if __name__ == "__main__":
    main()
