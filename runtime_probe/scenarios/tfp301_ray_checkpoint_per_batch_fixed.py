"""Ray Data + Ray Train: `map_batches` given a callable class, which gets the Keras model from the
TensorflowCheckpoint once per actor, in __init__.

Ray 2.60's `ray.train` wants pydantic for its v2 API; RAY_TRAIN_V2_ENABLED=0 lets the checkpoint
class import without it (the workers inherit the variable from the driver)."""
import os
import shutil
import tempfile
import time

os.environ.setdefault("RAY_TRAIN_V2_ENABLED", "0")

import numpy as np  # noqa: E402
import ray  # noqa: E402
import tensorflow as tf  # noqa: E402
from ray.train.tensorflow import TensorflowCheckpoint  # noqa: E402

from runtime_probe.support import report, start_ray  # noqa: E402

PROBE = {"rule": "TFP301", "kind": "fixed", "requires": ["ray", "pandas", "pyarrow", "fsspec", "requests"],
         "expect": {"outcome": "ok"}, "timeout": 300}

CHECKPOINT_DIR = os.path.join(tempfile.gettempdir(), "tfp301_ray_checkpoint")
ROWS, BATCH = 192, 8


class Predict:
    def __init__(self):
        self.model = TensorflowCheckpoint.from_directory(CHECKPOINT_DIR).get_model()  # once per actor

    def __call__(self, batch):
        batch["score"] = self.model.predict_on_batch(batch["x"])[:, 0]
        batch["copy"] = np.array([f"{os.getpid()}-{id(self.model)}"] * len(batch["x"]))
        return batch


def timed_rows(dataset):
    """The rows, and the time from the first batch's rows to the last's: what the batches cost
    once a worker (or the actor) is up, not the start of the pipeline."""
    rows, first = [], None
    for row in dataset.iter_rows():
        first = first or time.perf_counter()
        rows.append(row)
    return rows, time.perf_counter() - first


def main():
    model = tf.keras.Sequential([tf.keras.Input((64,)), tf.keras.layers.Dense(256, activation="relu"),
                                 tf.keras.layers.Dense(1)])
    shutil.rmtree(CHECKPOINT_DIR, ignore_errors=True)
    TensorflowCheckpoint.from_model(model).to_directory(CHECKPOINT_DIR)  # model.keras and its metadata
    data = np.random.default_rng(1).random((ROWS, 64), dtype=np.float32)
    start_ray()
    try:
        ds = ray.data.from_items([{"i": i, "x": row} for i, row in enumerate(data)])
        ds.limit(2 * BATCH).map_batches(Predict, batch_size=BATCH, concurrency=1).take_all()  # warm-up
        rows, elapsed = timed_rows(ds.map_batches(Predict, batch_size=BATCH, concurrency=1))
    finally:
        ray.shutdown()
    rows.sort(key=lambda row: row["i"])
    copies = len({row["copy"] for row in rows})
    report([row["score"] for row in rows], model.predict(data, verbose=0)[:, 0], rel_tol=1e-3,
           tasks_per_s=(ROWS // BATCH - 1) / elapsed, batches=ROWS // BATCH, model_copies=copies)


if __name__ == "__main__":
    main()
