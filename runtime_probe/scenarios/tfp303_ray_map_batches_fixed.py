"""Ray Data (`ray.init(num_cpus=2)`): `map_batches` with a callable class that loads the Keras
model once per actor and calls it once per batch of rows. Measures rows/s (reported as
tasks_per_s), the dataset's execution included."""
import os
import tempfile
import time

import numpy as np
import ray
import tensorflow as tf

from runtime_probe.support import report, start_ray

PROBE = {"rule": "TFP303", "kind": "fixed", "requires": ["ray"], "expect": {"outcome": "ok"}, "timeout": 300}

MODEL_PATH = os.path.join(tempfile.gettempdir(), "tfp303_ray_batches.keras")
ROWS = 65536


class Scorer:
    def __init__(self, path):
        self.model = tf.keras.models.load_model(path)

    def __call__(self, batch):
        return {"score": self.model.predict_on_batch(batch["data"])[:, 0]}


def main():
    trained = tf.keras.Sequential(
        [tf.keras.Input((64,)), tf.keras.layers.Dense(256, activation="relu"), tf.keras.layers.Dense(1)]
    )
    trained.save(MODEL_PATH)
    data = np.random.default_rng(1).random((ROWS, 64), dtype=np.float32)
    start_ray()
    try:
        ray.data.DataContext.get_current().execution_options.preserve_order = True
        ray.data.from_numpy(data[:64]).map_batches(Scorer, fn_constructor_args=(MODEL_PATH,), batch_size=32,
                                                   concurrency=1).take_all()  # warm-up: workers import TF
        start = time.perf_counter()
        rows = ray.data.from_numpy(data).map_batches(Scorer, fn_constructor_args=(MODEL_PATH,), batch_size=4096,
                                                     concurrency=2).take_all()
        elapsed = time.perf_counter() - start
    finally:
        ray.shutdown()
    report([row["score"] for row in rows], trained.predict(data, verbose=0)[:, 0], rel_tol=1e-3,
           tasks_per_s=ROWS / elapsed)


if __name__ == "__main__":
    main()
