"""A TF1 `tf.queue.FIFOQueue` handed to a spawn pool task with `apply_async`.

The idea: the parent fills an input queue in graph mode and a worker drains it in its own Session.
A graph-mode queue is a handle tensor of the parent's graph; pickling the task fails in the pool's
task-handler thread of the parent, and `.get()` re-raises it.
"""
import multiprocessing as mp

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {
    "rule": "TFP101",
    "kind": "bad",
    "expect": {"outcome": "exception", "type": "TypeError", "match": "cannot pickle", "where": "parent"},
    "timeout": 60,
}

tf.compat.v1.disable_eager_execution()

ROWS = np.random.default_rng(1).random((4, 8), dtype=np.float32)


def drain(queue, count):
    take = queue.dequeue()
    with tf.compat.v1.Session(graph=take.graph) as sess:
        return [sess.run(take).tolist() for _ in range(count)]


def main():
    queue = tf.queue.FIFOQueue(16, tf.float32, shapes=[8])
    fill = queue.enqueue_many(ROWS)
    with mp.get_context("spawn").Pool(1) as pool:
        pending = pool.apply_async(drain, (queue, len(ROWS)))
        with tf.compat.v1.Session() as sess:
            sess.run(fill)
        drained = pending.get(timeout=30)
    report(drained, ROWS)


if __name__ == "__main__":
    main()
