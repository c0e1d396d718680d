"""Dask: a WorkerPlugin loads the Keras model once per worker; tasks reuse it."""
import os
import tempfile
import time

import numpy as np
import tensorflow as tf
from dask.distributed import Client, LocalCluster, WorkerPlugin, get_worker

from runtime_probe.support import report

PROBE = {"rule": "TFP301", "kind": "fixed", "requires": ["dask", "distributed"], "expect": {"outcome": "ok"},
         "timeout": 300}

MODEL_PATH = os.path.join(tempfile.gettempdir(), "tfp301_dask.keras")


class LoadModel(WorkerPlugin):
    def __init__(self, path):
        self.path = path

    def setup(self, worker):
        worker.tf_model = tf.keras.models.load_model(self.path)


def predict(rows):
    return get_worker().tf_model.predict_on_batch(rows)


def main():
    trained = tf.keras.Sequential([tf.keras.Input((64,)), tf.keras.layers.Dense(256, activation="relu"),
                                   tf.keras.layers.Dense(1)])
    trained.save(MODEL_PATH)
    data = np.random.default_rng(1).random((24, 64), dtype=np.float32)
    batches = np.array_split(data, 12)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        client.register_plugin(LoadModel(MODEL_PATH))
        client.gather(client.map(predict, batches[:2], pure=False))  # warm-up
        start = time.perf_counter()
        scores = np.concatenate(client.gather(client.map(predict, batches, pure=False)))
        elapsed = time.perf_counter() - start
    report(scores, trained.predict(data, verbose=0), rel_tol=1e-3, tasks_per_s=len(batches) / elapsed)


if __name__ == "__main__":
    main()
