"""Dask: the model saved once, and a module-level task function that loads it once per worker
(a cached loader) and predicts; only the chunks travel with the tasks."""
import functools
import os
import tempfile
import time

import numpy as np
import tensorflow as tf
from dask.distributed import Client, LocalCluster

from runtime_probe.support import report

PROBE = {"rule": "TFP103", "kind": "fixed", "requires": ["dask", "distributed"], "timeout": 240}

CHUNKS = 32
WIDTH = 512


@functools.lru_cache(maxsize=None)
def loaded(path):
    return tf.keras.models.load_model(path)


def predict(path, chunk):
    return loaded(path).predict(chunk, verbose=0)


def main():
    model = tf.keras.Sequential(
        [tf.keras.Input((WIDTH,)), tf.keras.layers.Dense(2048, activation="relu"),
         tf.keras.layers.Dense(2048, activation="relu"), tf.keras.layers.Dense(1)]
    )  # 5.2 million weights, 21 MB
    data = np.random.default_rng(1).random((CHUNKS, 8, WIDTH), dtype=np.float32)
    expected = [model.predict(chunk, verbose=0) for chunk in data]
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.keras")
        model.save(path)
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
                Client(cluster) as client:
            client.gather(client.map(predict, [path] * 4, list(data[:4]), pure=False))  # warm-up, loads
            start = time.perf_counter()
            scores = client.gather(client.map(predict, [path] * CHUNKS, list(data), pure=False))
            elapsed = time.perf_counter() - start
    report(scores, expected, rel_tol=1e-3, tasks_per_s=CHUNKS / elapsed)


if __name__ == "__main__":
    main()
