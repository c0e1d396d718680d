"""A spawn pool whose initializer warms the model up; each task then limits its threads.

The initializer runs in every worker before its first task and starts TensorFlow's runtime there
(here one matmul stands for loading and warming up a model). The task's
`set_intra_op_parallelism_threads(1)` then comes too late: it raises `RuntimeError: Intra op
parallelism cannot be modified after initialization` in the worker, and `map` re-raises it in the
parent. This is the case a TFP301 fix (build once in a new initializer) would create if it left a
setting in the task: the analysis walks a pool's tasks from the state its initializer leaves.
"""
import multiprocessing as mp

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP402", "kind": "bad", "timeout": 90,
         "expect": {"outcome": "exception", "type": "RuntimeError",
                    "match": "Intra op parallelism cannot be modified after initialization"}}

SIZE = 256
_weights = None


def warm_up():
    global _weights
    _weights = tf.constant(np.eye(SIZE, dtype=np.float32))
    float(tf.reduce_sum(tf.matmul(_weights, _weights)))


def square_sum(seed):
    tf.config.threading.set_intra_op_parallelism_threads(1)
    m = tf.constant(np.random.default_rng(seed).random((SIZE, SIZE), dtype=np.float32))
    return float(tf.reduce_sum(tf.matmul(m, _weights)))


def main():
    seeds = [1, 2, 3, 4]
    with mp.get_context("spawn").Pool(2, initializer=warm_up) as pool:
        sums = pool.map(square_sum, seeds)
    expected = [float(np.random.default_rng(s).random((SIZE, SIZE), dtype=np.float32).sum()) for s in seeds]
    report(sums, expected, rel_tol=1e-3)


if __name__ == "__main__":
    main()
