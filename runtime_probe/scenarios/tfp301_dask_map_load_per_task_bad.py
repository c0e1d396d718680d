"""Dask: client.map over a function that loads the Keras model on every call (works, one load
per task)."""
import os
import tempfile
import time

import numpy as np
import tensorflow as tf
from dask.distributed import Client, LocalCluster

from runtime_probe.support import report

PROBE = {
    "rule": "TFP301",
    "kind": "bad",
    "requires": ["dask", "distributed"],
    "expect": {"outcome": "ok", "slower_than": {"scenario": "tfp301_dask_map_load_per_task_fixed", "factor": 2}},
    "timeout": 300,
}

MODEL_PATH = os.path.join(tempfile.gettempdir(), "tfp301_dask.keras")


def predict(rows):
    model = tf.keras.models.load_model(MODEL_PATH)
    return model.predict_on_batch(rows)


def main():
    trained = tf.keras.Sequential([tf.keras.Input((64,)), tf.keras.layers.Dense(256, activation="relu"),
                                   tf.keras.layers.Dense(1)])
    trained.save(MODEL_PATH)
    data = np.random.default_rng(1).random((24, 64), dtype=np.float32)
    batches = np.array_split(data, 12)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        client.gather(client.map(predict, batches[:2], pure=False))  # warm-up: the workers import TensorFlow
        start = time.perf_counter()
        scores = np.concatenate(client.gather(client.map(predict, batches, pure=False)))  # one load per task
        elapsed = time.perf_counter() - start
    report(scores, trained.predict(data, verbose=0), rel_tol=1e-3, tasks_per_s=len(batches) / elapsed)


if __name__ == "__main__":
    main()
