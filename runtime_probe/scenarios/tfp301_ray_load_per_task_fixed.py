"""Ray: two actors each load the Keras model once, in __init__; tasks are method calls."""
import os
import tempfile
import time

import numpy as np
import ray
import tensorflow as tf

from runtime_probe.support import report, start_ray

PROBE = {"rule": "TFP301", "kind": "fixed", "requires": ["ray"], "expect": {"outcome": "ok"}, "timeout": 300}

MODEL_PATH = os.path.join(tempfile.gettempdir(), "tfp301_ray.keras")


@ray.remote
class Predictor:
    def __init__(self, path):
        self.model = tf.keras.models.load_model(path)

    def predict(self, rows):
        return self.model.predict_on_batch(rows)


def main():
    trained = tf.keras.Sequential([tf.keras.Input((64,)), tf.keras.layers.Dense(256, activation="relu"),
                                   tf.keras.layers.Dense(1)])
    trained.save(MODEL_PATH)
    data = np.random.default_rng(1).random((24, 64), dtype=np.float32)
    batches = np.array_split(data, 12)
    start_ray()
    try:
        actors = [Predictor.remote(MODEL_PATH) for _ in range(2)]
        ray.get([actor.predict.remote(batches[0]) for actor in actors])  # warm-up: import and load
        start = time.perf_counter()
        futures = [actors[i % 2].predict.remote(b) for i, b in enumerate(batches)]
        scores = np.concatenate(ray.get(futures))
        elapsed = time.perf_counter() - start
    finally:
        ray.shutdown()
    report(scores, trained.predict(data, verbose=0), rel_tol=1e-3, tasks_per_s=len(batches) / elapsed)


if __name__ == "__main__":
    main()
