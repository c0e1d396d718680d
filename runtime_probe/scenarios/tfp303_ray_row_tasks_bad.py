"""Ray (`ray.init(num_cpus=2)`): one task per row, each worker process loading the Keras model
once (a lazy global: Ray keeps a task function's globals between the tasks of one worker,
measured), every task calling it on its one row. Measures rows/s (reported as tasks_per_s)."""
import os
import tempfile
import time

import numpy as np
import ray
import tensorflow as tf

from runtime_probe.support import report, start_ray

PROBE = {
    "rule": "TFP303",
    "kind": "bad",
    "requires": ["ray"],
    "expect": {"outcome": "ok", "slower_than": {"scenario": "tfp303_ray_map_batches_fixed", "factor": 3}},
    "timeout": 300,
}

MODEL_PATH = os.path.join(tempfile.gettempdir(), "tfp303_ray_rows.keras")
ROWS = 512  # rows/s is compared; a task per row costs milliseconds, so fewer rows than the twin
_model = None


@ray.remote
def score_row(row):
    global _model
    if _model is None:  # once per worker process
        _model = tf.keras.models.load_model(MODEL_PATH)
    return float(_model.predict_on_batch(row[None])[0, 0])


def main():
    trained = tf.keras.Sequential(
        [tf.keras.Input((64,)), tf.keras.layers.Dense(256, activation="relu"), tf.keras.layers.Dense(1)]
    )
    trained.save(MODEL_PATH)
    data = np.random.default_rng(1).random((ROWS, 64), dtype=np.float32)
    start_ray()
    try:
        ray.get([score_row.remote(row) for row in data[:8]])  # warm-up: both workers import and load
        start = time.perf_counter()
        scores = ray.get([score_row.remote(row) for row in data])
        elapsed = time.perf_counter() - start
    finally:
        ray.shutdown()
    report(scores, trained.predict(data, verbose=0)[:, 0], rel_tol=1e-3, tasks_per_s=ROWS / elapsed)


if __name__ == "__main__":
    main()
