"""A TF1 `tf.queue.FIFOQueue` passed to a spawn `Process(args=...)`: `start()` fails in the parent.

Spawn pickles the Process object with its arguments; the graph-mode queue is a handle tensor of
the parent's graph and does not pickle.
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


def drain(queue, count, results):
    take = queue.dequeue()
    with tf.compat.v1.Session(graph=take.graph) as sess:
        results.put([sess.run(take).tolist() for _ in range(count)])


def main():
    queue = tf.queue.FIFOQueue(16, tf.float32, shapes=[8])
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    consumer = ctx.Process(target=drain, args=(queue, len(ROWS), results))
    consumer.start()
    with tf.compat.v1.Session() as sess:
        sess.run(queue.enqueue_many(ROWS))
    drained = results.get(timeout=30)
    consumer.join()
    report(drained, ROWS)


if __name__ == "__main__":
    main()
