"""`set_start_method("spawn")` and the Pool under an `if __name__ == "__main__":` guard: works.

The twin of tfp202_module_level_spawn_pool_bad: workers still re-import the script, but the guarded
block runs only in the parent.
"""
import multiprocessing as mp

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"quick": True, "rule": "TFP202", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 90}

SIZE = 512


def matrix(seed):
    return np.random.default_rng(seed).random((SIZE, SIZE), dtype=np.float32)


def square_sum(seed):
    m = tf.constant(matrix(seed))
    return float(tf.reduce_sum(tf.matmul(m, m)))


if __name__ == "__main__":
    mp.set_start_method("spawn")
    seeds = [1, 2, 3, 4]
    with mp.Pool(2) as pool:
        sums = pool.map(square_sum, seeds)
    report(sums, [float((matrix(s) @ matrix(s)).sum()) for s in seeds], rel_tol=1e-3)
