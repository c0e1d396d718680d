"""The parent only imports TensorFlow (no graph, no session), then forks a pool: fine.

(Building a TF1 graph before the fork is another matter: it starts a thread the workers do not get,
and rarely a worker hangs; runtime_probe/fork_hazard.py measures it, TFP201 reports it.)"""
import multiprocessing as mp

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP201", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 40}


def matrix(seed):
    return np.random.default_rng(seed).random((512, 512), dtype=np.float32)


def square_sum(seed):
    m = tf.constant(matrix(seed))
    return float(tf.reduce_sum(tf.matmul(m, m)))


def main():
    seeds = [1, 2, 3, 4]
    with mp.Pool(2) as pool:
        sums = pool.map(square_sum, seeds)
    report(sums, [float((matrix(s) @ matrix(s)).sum()) for s in seeds])


if __name__ == "__main__":
    main()
