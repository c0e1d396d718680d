"""One intra-op thread per worker, set in a fork `ProcessPoolExecutor`'s `initializer`, after a parent op.

The forked worker inherits the parent's initialised runtime, so the call raises `RuntimeError:
Intra op parallelism cannot be modified after initialization.` in the worker (logged as "Exception
in initializer"); the worker exits and the executor fails every pending task with
`BrokenProcessPool` in the parent. (A multiprocessing Pool instead replaces the dead worker
endlessly: tfp402_threads_in_fork_initializer_bad.)
"""
import multiprocessing as mp
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {
    "rule": "TFP402",
    "kind": "bad",
    "expect": {"outcome": "exception", "type": "BrokenProcessPool", "match": "terminated abruptly", "where": "parent"},
    "timeout": 40,
}

SIZE = 512


def matrix(seed):
    return np.random.default_rng(seed).random((SIZE, SIZE), dtype=np.float32)


def one_thread_each():
    tf.config.threading.set_intra_op_parallelism_threads(1)


def square_sum(seed):
    m = tf.constant(matrix(seed))
    return float(tf.reduce_sum(tf.matmul(m, m)))


def main():
    print("parent checksum", float(tf.reduce_sum(tf.constant(matrix(0)))))
    seeds = [1, 2, 3, 4]
    with ProcessPoolExecutor(2, mp_context=mp.get_context("fork"), initializer=one_thread_each) as executor:
        sums = list(executor.map(square_sum, seeds))
    report(sums, [float((matrix(s) @ matrix(s)).sum()) for s in seeds], rel_tol=1e-3)


if __name__ == "__main__":
    main()
