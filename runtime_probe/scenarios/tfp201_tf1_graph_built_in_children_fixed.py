"""TF1 graph mode: the parent builds nothing before it forks; each child builds the training graph.

The fixed twin of tfp201_tf1_session_then_fork_bad. Each forked child builds the graph (placeholders,
a Variable, an optimizer, a Saver), opens its own Session and trains one step with 512x512 matrices:
works. (Building the graph in the parent before the fork, even without a Session, starts a thread of
TensorFlow's that the children do not get: almost always fine, rarely a child hangs; that rate is
measured by runtime_probe/fork_hazard.py, not by a scenario, whose one run cannot show it.)
"""
import multiprocessing as mp
import os
import tempfile

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"quick": True, "rule": "TFP201", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 60}

tf.compat.v1.disable_eager_execution()

SIZE = 512
INITIAL = np.random.default_rng(0).random((SIZE, SIZE), dtype=np.float32) / SIZE


def batch(seed):
    return np.random.default_rng(seed).random((SIZE, SIZE), dtype=np.float32)


def build():
    rows = tf.compat.v1.placeholder(tf.float32, [None, SIZE], name="rows")
    weights = tf.compat.v1.Variable(INITIAL, name="weights")
    loss = tf.reduce_mean(tf.square(tf.matmul(rows, weights)))
    step = tf.compat.v1.train.GradientDescentOptimizer(0.01).minimize(loss)
    saver = tf.compat.v1.train.Saver([weights])
    return rows, loss, step, saver


def train(seed, results):
    rows, loss, step, saver = build()
    with tf.compat.v1.Session(graph=loss.graph) as sess:
        sess.run(tf.compat.v1.variables_initializer(loss.graph.get_collection("variables")))
        before = sess.run(loss, {rows: batch(seed)})
        sess.run(step, {rows: batch(seed)})
        saver.save(sess, os.path.join(tempfile.gettempdir(), f"child-{seed}.ckpt"))
    results.put((seed, float(before)))


def main():
    ctx = mp.get_context("fork")
    results = ctx.Queue()
    seeds = [1, 2]
    children = [ctx.Process(target=train, args=(seed, results)) for seed in seeds]
    for child in children:
        child.start()
    losses = dict(results.get() for _ in children)
    for child in children:
        child.join()
    expected = [float(np.mean(np.square(batch(seed) @ INITIAL))) for seed in seeds]
    report([losses[seed] for seed in seeds], expected, rel_tol=1e-3)


if __name__ == "__main__":
    main()
