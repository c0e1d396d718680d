"""PySpark: an RDD partition function that reads the driver's TF1 session (a module global).

Spark pickles the function by value with the globals it reads (cloudpickle), in the driver:
`PicklingError: Could not serialize object: TypeError: cannot pickle 'Graph' object`.
"""
import os
import sys

import numpy as np
import tensorflow.compat.v1 as tf
from pyspark import SparkContext

from runtime_probe.support import report

PROBE = {
    "rule": "TFP103",
    "kind": "bad",
    "requires": ["pyspark", "pandas", "pyarrow", "java"],
    "expect": {"outcome": "exception", "type": "PicklingError", "match": "Could not serialize object",
               "where": "parent"},
    "timeout": 400,
}

tf.disable_eager_execution()
graph = tf.Graph()
with graph.as_default():
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    tf.reduce_sum(x, axis=1, name="y")
sess = tf.Session(graph=graph)


def totals(rows):
    yield from sess.run("y:0", {"x:0": np.array(list(rows), np.float32)}).tolist()


def main():
    os.environ["PYSPARK_PYTHON"] = sys.executable  # the workers need the interpreter that has TensorFlow
    sc = SparkContext("local[2]", "tfp103")
    try:
        rows = np.ones((8, 4), np.float32).tolist()
        report(sc.parallelize(rows, 2).mapPartitions(totals).collect(), [4.0] * 8)
    finally:
        sc.stop()


if __name__ == "__main__":
    main()
