"""Ray: a TF1 session given to a task as its argument.

`TypeError: Could not serialize the argument <...Session>` from .remote(), in the driver.
"""
import numpy as np
import ray
import tensorflow.compat.v1 as tf

from runtime_probe.support import report, start_ray

PROBE = {
    "rule": "TFP101",
    "kind": "bad",
    "requires": ["ray"],
    "expect": {"outcome": "exception", "type": "TypeError", "match": "Could not serialize the argument",
               "where": "parent"},
    "timeout": 300,
}


@ray.remote
def total(sess, rows):
    return float(sess.run("total:0", {"x:0": rows}))


def main():
    tf.disable_eager_execution()
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        tf.reduce_sum(x, name="total")
    sess = tf.Session(graph=graph)
    rows = np.ones((3, 4), np.float32)
    start_ray()
    try:
        report(ray.get(total.remote(sess, rows)), 12.0)
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
