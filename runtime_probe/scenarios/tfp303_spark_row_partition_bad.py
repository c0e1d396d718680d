"""PySpark: an rdd.mapPartitions function that loads the Keras model once per partition, then runs
it on one row at a time. Measures rows/s (reported as tasks_per_s)."""
import os
import sys
import tempfile
import time

import numpy as np
import tensorflow as tf
from pyspark.sql import SparkSession

from runtime_probe.support import report

PROBE = {
    "rule": "TFP303",
    "kind": "bad",
    "requires": ["pyspark", "java"],
    "expect": {"outcome": "ok", "slower_than": {"scenario": "tfp303_spark_stacked_partition_fixed", "factor": 3}},
    "timeout": 400,
}

MODEL_PATH = os.path.join(tempfile.gettempdir(), "tfp303_spark_partition.keras")
ROWS = 512  # rows/s is compared; a Keras predict() per row costs tens of ms, so fewer rows than the twin


def predict_rows(rows):
    model = tf.keras.models.load_model(MODEL_PATH)
    for row in rows:
        yield float(model.predict(np.expand_dims(row, 0), verbose=0)[0, 0])


def main():
    os.environ["PYSPARK_PYTHON"] = sys.executable  # the workers need the interpreter that has TensorFlow
    trained = tf.keras.Sequential(
        [tf.keras.Input((64,)), tf.keras.layers.Dense(256, activation="relu"), tf.keras.layers.Dense(1)]
    )
    trained.save(MODEL_PATH)
    data = np.random.default_rng(1).random((ROWS, 64), dtype=np.float32)
    expected = trained.predict(data, verbose=0)[:, 0]
    spark = SparkSession.builder.master("local[2]").appName("tfp303").getOrCreate()
    try:
        rdd = spark.sparkContext.parallelize(list(data), 2).cache()
        rdd.count()
        # warm-up: both Python workers start and import TensorFlow (Spark reuses them)
        spark.sparkContext.parallelize(list(data[:8]), 2).mapPartitions(predict_rows).collect()
        start = time.perf_counter()
        scores = rdd.mapPartitions(predict_rows).collect()
        elapsed = time.perf_counter() - start
    finally:
        spark.stop()
    report(scores, expected, rel_tol=1e-3, tasks_per_s=ROWS / elapsed)


if __name__ == "__main__":
    main()
