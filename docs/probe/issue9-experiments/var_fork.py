"""Record only: a graph-mode tf.Variable passed to a forked Process (no Session in the parent yet).

The child gets a copy of the Python graph objects; it initialises and updates the variable in its
own Session. The parent's Session afterwards sees only its own initial value.
"""
import multiprocessing as mp

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP101", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 60}

tf.compat.v1.disable_eager_execution()


def child(counter, results):
    with tf.compat.v1.Session(graph=counter.graph) as sess:
        sess.run(counter.initializer)
        sess.run(counter.assign_add(tf.ones([4])))
        results.put(sess.run(counter).tolist())


def main():
    counter = tf.compat.v1.Variable(np.arange(4, dtype=np.float32), name="counter")
    ctx = mp.get_context("fork")
    results = ctx.Queue()
    process = ctx.Process(target=child, args=(counter, results))
    process.start()
    in_child = results.get(timeout=30)
    process.join()
    with tf.compat.v1.Session() as sess:
        sess.run(counter.initializer)
        in_parent = sess.run(counter).tolist()
    print("child saw", in_child, "parent sees", in_parent)
    report([in_child, in_parent], [[1.0, 2.0, 3.0, 4.0], [0.0, 1.0, 2.0, 3.0]])


if __name__ == "__main__":
    main()
