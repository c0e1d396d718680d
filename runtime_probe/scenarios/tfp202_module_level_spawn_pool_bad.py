"""`set_start_method("spawn")` and a Pool at module level, with no `if __name__ == "__main__":` guard.

Each spawned worker re-imports the script (as `__mp_main__`) and runs its top level again; its own
`set_start_method("spawn")` raises `RuntimeError: context has already been set`, the worker dies,
the pool starts another, and `map` never returns.
"""
import multiprocessing as mp

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"quick": True, "rule": "TFP202", "kind": "bad", "expect": {"outcome": "lost task"}, "timeout": 60}
# 60 s: on a loaded machine the spawned workers need more than 40 s to import TensorFlow and die, and the
# run was then judged a hang (seen once at load average 12)

SIZE = 512


def matrix(seed):
    return np.random.default_rng(seed).random((SIZE, SIZE), dtype=np.float32)


def square_sum(seed):
    m = tf.constant(matrix(seed))
    return float(tf.reduce_sum(tf.matmul(m, m)))


mp.set_start_method("spawn")
seeds = [1, 2, 3, 4]
with mp.Pool(2) as pool:
    sums = pool.map(square_sum, seeds)
report(sums, [float((matrix(s) @ matrix(s)).sum()) for s in seeds], rel_tol=1e-3)
