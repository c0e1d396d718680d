"""PySpark: each partition builds its own TF1 graph and session."""
import os
import sys

import numpy as np
from pyspark import SparkContext

from runtime_probe.support import report

PROBE = {"rule": "TFP103", "kind": "fixed", "requires": ["pyspark", "pandas", "pyarrow", "java"],
         "expect": {"outcome": "ok"}, "timeout": 400}


def totals(rows):
    import tensorflow.compat.v1 as tf

    tf.disable_eager_execution()
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        tf.reduce_sum(x, axis=1, name="y")
    with tf.Session(graph=graph) as sess:
        yield from sess.run("y:0", {"x:0": np.array(list(rows), np.float32)}).tolist()


def main():
    os.environ["PYSPARK_PYTHON"] = sys.executable
    sc = SparkContext("local[2]", "tfp103")
    try:
        rows = np.ones((8, 4), np.float32).tolist()
        report(sc.parallelize(rows, 2).mapPartitions(totals).collect(), [4.0] * 8)
    finally:
        sc.stop()


if __name__ == "__main__":
    main()
