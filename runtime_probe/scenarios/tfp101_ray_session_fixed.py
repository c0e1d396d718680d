"""Ray: an actor builds its TF1 graph and session once, in __init__; tasks send arrays."""
import numpy as np
import ray

from runtime_probe.support import report, start_ray

PROBE = {"rule": "TFP101", "kind": "fixed", "requires": ["ray"], "expect": {"outcome": "ok"}, "timeout": 300}


@ray.remote
class Totals:
    def __init__(self):
        import tensorflow.compat.v1 as tf

        tf.disable_eager_execution()
        graph = tf.Graph()
        with graph.as_default():
            x = tf.placeholder(tf.float32, [None, 4], name="x")
            tf.reduce_sum(x, name="total")
        self.sess = tf.Session(graph=graph)

    def total(self, rows):
        return float(self.sess.run("total:0", {"x:0": rows}))


def main():
    start_ray()
    try:
        actor = Totals.remote()
        rows = np.ones((3, 4), np.float32)
        report(ray.get([actor.total.remote(rows) for _ in range(3)]), [12.0] * 3)
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
