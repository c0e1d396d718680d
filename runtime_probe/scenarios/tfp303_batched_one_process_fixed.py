"""No pool: one process calls the same model on 64 rows at a time. Measures rows/s (reported as
tasks_per_s, to compare with one row per pool task)."""
import time

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {
    "rule": "TFP303",
    "kind": "fixed",
    "expect": {"outcome": "ok", "faster_than": {"scenario": "tfp303_row_pool_bad", "factor": 3}},
    "timeout": 90,
}

ROWS, BATCH = 1024, 64


def main():
    model = tf.keras.Sequential(
        [tf.keras.Input((64,)), tf.keras.layers.Dense(256, activation="relu"), tf.keras.layers.Dense(1)]
    )
    rows = np.random.default_rng(1).random((ROWS, 64), dtype=np.float32)
    expected = model.predict(rows, verbose=0)
    model.predict_on_batch(rows[:BATCH])  # warm-up: the first call traces the model
    start = time.perf_counter()
    scores = np.concatenate([model.predict_on_batch(rows[i:i + BATCH]) for i in range(0, ROWS, BATCH)])
    elapsed = time.perf_counter() - start
    report(scores, expected, tasks_per_s=ROWS / elapsed)


if __name__ == "__main__":
    main()
