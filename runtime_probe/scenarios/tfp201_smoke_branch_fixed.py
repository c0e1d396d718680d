"""A `--smoke-test` branch runs a TF op in the parent and returns; the normal path forks TF workers.

The op in the parent only happens on the smoke-test path, which ends before any pool exists. Run
normally (as here), the parent never starts the runtime, and the fork pool's 768x768 matmuls work.
A linter must not treat an op in a branch that leaves the function as preceding the pool.
"""
import argparse
import multiprocessing as mp
import sys

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


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--smoke-test", action="store_true", help="run one product in-process and stop")
    parser.add_argument("--check-only", action="store_true", help="check that TF runs, then exit")
    args = parser.parse_args(argv)
    if args.smoke_test:
        print("smoke test", square_sum(0))
        return
    if args.check_only:
        print("TF works:", float(tf.reduce_sum(tf.ones((2, 2)))))
        sys.exit(0)

    seeds = [1, 2, 3, 4]
    with mp.get_context("fork").Pool(2) as pool:
        sums = pool.map(square_sum, seeds)
    report(sums, [float((matrix(s) @ matrix(s)).sum()) for s in seeds], rel_tol=1e-3)


if __name__ == "__main__":
    main()
