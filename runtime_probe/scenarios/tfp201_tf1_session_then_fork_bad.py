"""TF1 graph mode: the parent runs one Session on the training graph, then forks children.

The parent builds the graph and checks the initial loss in a Session before it forks (its fixed twin,
tfp201_tf1_graph_built_in_children_fixed, builds the graph in the children). The Session starts the
runtime's thread pools; the forked children open their own Session on the inherited graph and
never get a result back.
"""
import multiprocessing as mp
import os
import tempfile

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP201", "kind": "bad", "expect": {"outcome": "hang"}, "timeout": 40}

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


def train(rows, loss, step, saver, seed, results):
    with tf.compat.v1.Session(graph=loss.graph) as sess:
        sess.run(tf.compat.v1.variables_initializer(loss.graph.get_collection("variables")))
        before = sess.run(loss, {rows: batch(seed)})
        sess.run(step, {rows: batch(seed)})
        saver.save(sess, os.path.join(tempfile.gettempdir(), f"child-{seed}.ckpt"))
    results.put((seed, float(before)))


def main():
    rows, loss, step, saver = build()
    with tf.compat.v1.Session(graph=loss.graph) as sess:  # a sanity check in the parent
        sess.run(tf.compat.v1.variables_initializer(loss.graph.get_collection("variables")))
        print("parent loss", sess.run(loss, {rows: batch(0)}))
    ctx = mp.get_context("fork")
    results = ctx.Queue()
    seeds = [1, 2]
    children = [ctx.Process(target=train, args=(rows, loss, step, saver, seed, results)) for seed in seeds]
    for child in children:
        child.start()
    losses = dict(results.get() for _ in children)
    for child in children:
        child.join()
    expected = [float(np.mean(np.square(batch(seed) @ INITIAL))) for seed in seeds]
    report([losses[seed] for seed in seeds], expected, rel_tol=1e-3)


if __name__ == "__main__":
    main()
