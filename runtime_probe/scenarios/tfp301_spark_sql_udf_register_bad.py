"""PySpark SQL: a plain Python function registered with `spark.udf.register` loads the Keras model
for every row of the query (works, one load per row: each load appends a line to a count file)."""
import os
import sys
import tempfile
import time

import numpy as np
import tensorflow as tf
from pyspark.sql import SparkSession
from pyspark.sql.types import DoubleType

from runtime_probe.support import report

PROBE = {
    "rule": "TFP301",
    "kind": "bad",
    "requires": ["pyspark", "pandas", "pyarrow", "java"],
    "expect": {"outcome": "ok", "slower_than": {"scenario": "tfp301_spark_sql_udf_register_fixed", "factor": 3}},
    "timeout": 400,
}

MODEL_PATH = os.path.join(tempfile.gettempdir(), "tfp301_spark_sql.keras")
LOADS = os.path.join(tempfile.gettempdir(), "tfp301_spark_sql_loads.txt")
ROWS = 40


def score(x):
    model = tf.keras.models.load_model(MODEL_PATH)
    with open(LOADS, "a", encoding="utf-8") as loads:
        loads.write("load\n")
    return float(model.predict_on_batch(np.array([[x]], dtype=np.float32))[0, 0])


def main():
    os.environ["PYSPARK_PYTHON"] = sys.executable  # the workers need the interpreter that has TensorFlow
    model = tf.keras.Sequential([tf.keras.Input((1,)), tf.keras.layers.Dense(1, kernel_initializer="ones")])
    model.save(MODEL_PATH)
    spark = SparkSession.builder.master("local[2]").appName("tfp301-sql").getOrCreate()
    try:
        spark.udf.register("score", score, DoubleType())
        spark.sql("SELECT score(id) FROM range(0, 4, 1, 2)").collect()  # warm-up: the workers import TensorFlow
        open(LOADS, "w", encoding="utf-8").close()
        start = time.perf_counter()
        values = [row[0] for row in spark.sql(f"SELECT score(id) FROM range(0, {ROWS}, 1, 2)").collect()]
        elapsed = time.perf_counter() - start
    finally:
        spark.stop()
    with open(LOADS, encoding="utf-8") as loads:
        count = len(loads.readlines())
    report(values, [float(i) for i in range(ROWS)], rel_tol=1e-3, tasks_per_s=ROWS / elapsed, rows=ROWS,
           model_loads=count)


if __name__ == "__main__":
    main()
