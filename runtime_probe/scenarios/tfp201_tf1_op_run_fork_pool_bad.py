"""TF1 graph mode: a Session made and run in the parent at import, then a fork pool whose task
runs a graph operation with `op.run(session=sess)`.

`Operation.run(session=...)` runs the session like `sess.run` does; the forked workers inherit a
runtime whose thread pools do not exist in them and never return.
"""
import multiprocessing as mp

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP201", "kind": "bad", "expect": {"outcome": "hang"}, "timeout": 40}

tf.compat.v1.disable_eager_execution()

SIZE = 512
WEIGHTS = np.random.default_rng(0).random((SIZE, SIZE), dtype=np.float32)


def batch(seed):
    return np.random.default_rng(seed).random((SIZE, SIZE), dtype=np.float32)


rows = tf.compat.v1.placeholder(tf.float32, [None, SIZE], name="rows")
product = tf.matmul(rows, WEIGHTS)
check = tf.debugging.assert_all_finite(product, "non-finite scores").op
sess = tf.compat.v1.Session()
check.run(session=sess, feed_dict={rows: batch(0)})


def validate(seed):
    check.run(session=sess, feed_dict={rows: batch(seed)})
    return seed


def main():
    seeds = [1, 2]
    with mp.get_context("fork").Pool(2) as pool:
        checked = pool.map(validate, seeds)
    report(checked, seeds)


if __name__ == "__main__":
    main()
