"""Dask (LocalCluster, 2 worker processes): one `client.submit` task per row, each worker loading
the Keras model once (a WorkerPlugin), every task calling it on its one row. Measures rows/s
(reported as tasks_per_s)."""
import os
import tempfile
import time

import numpy as np
import tensorflow as tf
from dask.distributed import Client, LocalCluster, WorkerPlugin, get_worker

from runtime_probe.support import report

PROBE = {
    "rule": "TFP303",
    "kind": "bad",
    "requires": ["dask", "distributed"],
    "expect": {"outcome": "ok", "slower_than": {"scenario": "tfp303_dask_stacked_chunks_fixed", "factor": 3}},
    "timeout": 300,
}

MODEL_PATH = os.path.join(tempfile.gettempdir(), "tfp303_dask_rows.keras")
ROWS = 256  # rows/s is compared; a task per row costs milliseconds, so fewer rows than the twin


class LoadModel(WorkerPlugin):
    """Loads the model once per worker process (a lazy global in a script's task function would
    not last: Dask unpickles the function with fresh globals for every task, measured)."""

    def __init__(self, path):
        self.path = path

    def setup(self, worker):
        worker.tf_model = tf.keras.models.load_model(self.path)


def score_row(row):
    return float(get_worker().tf_model.predict_on_batch(row[None])[0, 0])


def main():
    trained = tf.keras.Sequential(
        [tf.keras.Input((64,)), tf.keras.layers.Dense(256, activation="relu"), tf.keras.layers.Dense(1)]
    )
    trained.save(MODEL_PATH)
    data = np.random.default_rng(1).random((ROWS, 64), dtype=np.float32)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        client.register_plugin(LoadModel(MODEL_PATH))
        client.gather([client.submit(score_row, row, pure=False) for row in data[:8]])  # warm-up
        start = time.perf_counter()
        futures = [client.submit(score_row, row, pure=False) for row in data]
        scores = client.gather(futures)
        elapsed = time.perf_counter() - start
    report(scores, trained.predict(data, verbose=0)[:, 0], rel_tol=1e-3, tasks_per_s=ROWS / elapsed)


if __name__ == "__main__":
    main()
