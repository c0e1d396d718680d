"""TF1 graph mode: after a Session ran in the parent, forked children that never touch TensorFlow.

The parent trains in a Session; the children only compute statistics of the batches with numpy and
send them back on a queue. Forking after the runtime started hurts only children that run TF ops.
"""
import multiprocessing as mp

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP201", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 60}

tf.compat.v1.disable_eager_execution()

SIZE = 512
INITIAL = np.random.default_rng(0).random((SIZE, SIZE), dtype=np.float32) / SIZE


def batch(seed):
    return np.random.default_rng(seed).random((SIZE, SIZE), dtype=np.float32)


def batch_stats(seed, results):
    rows = batch(seed)
    results.put((seed, float(np.mean(np.square(rows @ INITIAL)))))


def main():
    rows = tf.compat.v1.placeholder(tf.float32, [None, SIZE], name="rows")
    weights = tf.compat.v1.Variable(INITIAL, name="weights")
    loss = tf.reduce_mean(tf.square(tf.matmul(rows, weights)))
    step = tf.compat.v1.train.GradientDescentOptimizer(0.01).minimize(loss)
    sess = tf.compat.v1.Session()
    sess.run(tf.compat.v1.global_variables_initializer())
    seeds = [1, 2]
    expected = [float(sess.run(loss, {rows: batch(seed)})) for seed in seeds]
    sess.run(step, {rows: batch(0)})

    ctx = mp.get_context("fork")
    results = ctx.Queue()
    children = [ctx.Process(target=batch_stats, args=(seed, results)) for seed in seeds]
    for child in children:
        child.start()
    stats = dict(results.get() for _ in children)
    for child in children:
        child.join()
    sess.close()
    report([stats[seed] for seed in seeds], expected, rel_tol=1e-3)


if __name__ == "__main__":
    main()
