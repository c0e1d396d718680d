"""PySpark SQL: an iterator pandas_udf registered with `spark.udf.register` loads the Keras model
once per partition (ten times the rows; each load appends a line to a count file)."""
import os
import sys
import tempfile
import time
from typing import Iterator

import pandas as pd
import tensorflow as tf
from pyspark.sql import SparkSession
from pyspark.sql.functions import pandas_udf
from pyspark.sql.types import DoubleType

from runtime_probe.support import report

PROBE = {"rule": "TFP301", "kind": "fixed", "requires": ["pyspark", "pandas", "pyarrow", "java"],
         "expect": {"outcome": "ok"}, "timeout": 400}

MODEL_PATH = os.path.join(tempfile.gettempdir(), "tfp301_spark_sql.keras")
LOADS = os.path.join(tempfile.gettempdir(), "tfp301_spark_sql_loads.txt")
ROWS = 400


@pandas_udf(DoubleType())  # a type object: a DDL string needs a session at import
def score(batches: Iterator[pd.Series]) -> Iterator[pd.Series]:
    model = tf.keras.models.load_model(MODEL_PATH)
    with open(LOADS, "a", encoding="utf-8") as loads:
        loads.write("load\n")
    for batch in batches:
        yield pd.Series(model.predict_on_batch(batch.to_numpy(dtype="float32")[:, None])[:, 0])


def main():
    os.environ["PYSPARK_PYTHON"] = sys.executable
    model = tf.keras.Sequential([tf.keras.Input((1,)), tf.keras.layers.Dense(1, kernel_initializer="ones")])
    model.save(MODEL_PATH)
    spark = SparkSession.builder.master("local[2]").appName("tfp301-sql").getOrCreate()
    try:
        spark.udf.register("score", score)
        spark.sql("SELECT score(id) FROM range(0, 4, 1, 2)").collect()  # warm-up
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
