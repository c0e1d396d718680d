"""Ray: every task loads the Keras model again (works, one load per task)."""
import os
import tempfile
import time

import numpy as np
import ray
import tensorflow as tf

from runtime_probe.support import report, start_ray

PROBE = {
    "rule": "TFP301",
    "kind": "bad",
    "requires": ["ray"],
    "expect": {"outcome": "ok", "slower_than": {"scenario": "tfp301_ray_load_per_task_fixed", "factor": 2}},
    "timeout": 300,
}

MODEL_PATH = os.path.join(tempfile.gettempdir(), "tfp301_ray.keras")


@ray.remote
def predict(rows):
    model = tf.keras.models.load_model(MODEL_PATH)
    return model.predict_on_batch(rows)


def main():
    trained = tf.keras.Sequential([tf.keras.Input((64,)), tf.keras.layers.Dense(256, activation="relu"),
                                   tf.keras.layers.Dense(1)])
    trained.save(MODEL_PATH)
    data = np.random.default_rng(1).random((24, 64), dtype=np.float32)
    batches = np.array_split(data, 12)
    start_ray()
    try:
        ray.get([predict.remote(b) for b in batches[:2]])  # warm-up: the workers import TensorFlow
        start = time.perf_counter()
        scores = np.concatenate(ray.get([predict.remote(b) for b in batches]))  # one load per task
        elapsed = time.perf_counter() - start
    finally:
        ray.shutdown()
    report(scores, trained.predict(data, verbose=0), rel_tol=1e-3, tasks_per_s=len(batches) / elapsed)


if __name__ == "__main__":
    main()
