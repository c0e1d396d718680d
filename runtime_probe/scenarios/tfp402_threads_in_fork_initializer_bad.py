"""Limiting each worker to one intra-op thread in a fork pool's `initializer`, after a parent op.

A common attempt to stop workers from oversubscribing the cores. The forked worker inherits the
parent's initialised runtime, so the call raises `RuntimeError: Intra op parallelism cannot be
modified after initialization.` in every worker; a Pool does not report initializer errors, it
replaces the dead worker, again and again (hundreds of tracebacks a minute), and `map` never
returns. The workers usually die too fast for the probe to see them (it counts a worker that lived
at least two samples, 0.1 s apart), so it reports a hang at the time limit; on a loaded machine they
live long enough to be seen, and the same failure is a lost task (1,823 dead workers in one run).
"""
import multiprocessing as mp

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP402", "kind": "bad", "expect": {"outcome": "hang", "or": "lost task"}, "timeout": 40}

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
    with mp.get_context("fork").Pool(2, initializer=one_thread_each) as pool:
        sums = pool.map(square_sum, seeds)
    report(sums, [float((matrix(s) @ matrix(s)).sum()) for s in seeds], rel_tol=1e-3)


if __name__ == "__main__":
    main()
