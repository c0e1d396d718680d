"""PySpark: an iterator pandas_udf loads the Keras model once per partition (ten times the rows)."""
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

MODEL_PATH = os.path.join(tempfile.gettempdir(), "tfp301_spark.keras")
ROWS = 400


@pandas_udf(DoubleType())  # a type object: a DDL string needs a session at import
def score(batches: Iterator[pd.Series]) -> Iterator[pd.Series]:
    model = tf.keras.models.load_model(MODEL_PATH)
    for batch in batches:
        yield pd.Series(model.predict_on_batch(batch.to_numpy(dtype="float32")[:, None])[:, 0])


def main():
    os.environ["PYSPARK_PYTHON"] = sys.executable
    model = tf.keras.Sequential([tf.keras.Input((1,)), tf.keras.layers.Dense(1, kernel_initializer="ones")])
    model.save(MODEL_PATH)
    spark = SparkSession.builder.master("local[2]").appName("tfp301").getOrCreate()
    try:
        spark.range(4, numPartitions=2).select(score("id")).collect()  # warm-up
        start = time.perf_counter()
        values = [row[0] for row in spark.range(ROWS, numPartitions=2).select(score("id")).collect()]
        elapsed = time.perf_counter() - start
    finally:
        spark.stop()
    report(values, [float(i) for i in range(ROWS)], rel_tol=1e-3, tasks_per_s=ROWS / elapsed)


if __name__ == "__main__":
    main()
