"""The same two workers and model, sent chunks of 64 rows: one model call per chunk. Measures
rows/s (reported as tasks_per_s, to compare with one row per task)."""
import multiprocessing as mp
import os
import tempfile
import time

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"quick": True, "rule": "TFP303", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 120}

MODEL_PATH = os.path.join(tempfile.gettempdir(), "tfp303_chunked_pool.keras")
ROWS, CHUNK = 1024, 64
model = None


def load_model():
    global model
    model = tf.keras.models.load_model(MODEL_PATH)


def predict_chunk(rows):
    return model.predict_on_batch(rows)


def main():
    trained = tf.keras.Sequential(
        [tf.keras.Input((64,)), tf.keras.layers.Dense(256, activation="relu"), tf.keras.layers.Dense(1)]
    )
    trained.save(MODEL_PATH)
    rows = np.random.default_rng(1).random((ROWS, 64), dtype=np.float32)
    expected = trained.predict(rows, verbose=0)

    with mp.get_context("spawn").Pool(2, initializer=load_model) as pool:
        pool.map(predict_chunk, [rows[:CHUNK]] * 4, chunksize=1)  # warm-up: every worker's first model call
        start = time.perf_counter()
        scores = np.concatenate(pool.map(predict_chunk, np.array_split(rows, ROWS // CHUNK), chunksize=1))
        elapsed = time.perf_counter() - start
    report(scores, expected, tasks_per_s=ROWS / elapsed)


if __name__ == "__main__":
    main()
