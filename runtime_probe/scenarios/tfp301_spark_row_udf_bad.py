"""PySpark: a row udf that loads the Keras model for every row (works, one load per row)."""
import os
import sys
import tempfile
import time

import numpy as np
import tensorflow as tf
from pyspark.sql import SparkSession
from pyspark.sql.functions import udf
from pyspark.sql.types import DoubleType

from runtime_probe.support import report

PROBE = {
    "rule": "TFP301",
    "kind": "bad",
    "requires": ["pyspark", "pandas", "pyarrow", "java"],
    "expect": {"outcome": "ok", "slower_than": {"scenario": "tfp301_spark_row_udf_fixed", "factor": 3}},
    "timeout": 400,
}

MODEL_PATH = os.path.join(tempfile.gettempdir(), "tfp301_spark.keras")
ROWS = 40


@udf(DoubleType())  # a type object: a DDL string needs a session at import
def score(x):
    model = tf.keras.models.load_model(MODEL_PATH)
    return float(model.predict_on_batch(np.array([[x]], dtype=np.float32))[0, 0])


def main():
    os.environ["PYSPARK_PYTHON"] = sys.executable  # the workers need the interpreter that has TensorFlow
    model = tf.keras.Sequential([tf.keras.Input((1,)), tf.keras.layers.Dense(1, kernel_initializer="ones")])
    model.save(MODEL_PATH)
    spark = SparkSession.builder.master("local[2]").appName("tfp301").getOrCreate()
    try:
        spark.range(4, numPartitions=2).select(score("id")).collect()  # warm-up: the workers import TensorFlow
        start = time.perf_counter()
        values = [row[0] for row in spark.range(ROWS, numPartitions=2).select(score("id")).collect()]
        elapsed = time.perf_counter() - start
    finally:
        spark.stop()
    report(values, [float(i) for i in range(ROWS)], rel_tol=1e-3, tasks_per_s=ROWS / elapsed)


if __name__ == "__main__":
    main()
