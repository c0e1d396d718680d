"""Dask: `client.map(model.predict, chunks)` with a Keras model made in the driver.

It works, but Dask pickles the bound method with its model for every task: each task saves the
whole model in the client and loads a fresh copy on the worker (measured: 10 tasks, 10 loads).
With this 21 MB model: 2 tasks/s, against 11 for the fixed twin (an 18 KB model: 5 against 6).
"""
import time

import numpy as np
import tensorflow as tf
from dask.distributed import Client, LocalCluster

from runtime_probe.support import report

PROBE = {
    "rule": "TFP103",
    "kind": "bad",
    "requires": ["dask", "distributed"],
    "expect": {"outcome": "ok", "slower_than": {"scenario": "tfp103_dask_bound_predict_fixed", "factor": 1.5}},
    "timeout": 240,
}

CHUNKS = 32
WIDTH = 512


def main():
    model = tf.keras.Sequential(
        [tf.keras.Input((WIDTH,)), tf.keras.layers.Dense(2048, activation="relu"),
         tf.keras.layers.Dense(2048, activation="relu"), tf.keras.layers.Dense(1)]
    )  # 5.2 million weights, 21 MB
    data = np.random.default_rng(1).random((CHUNKS, 8, WIDTH), dtype=np.float32)
    expected = [model.predict(chunk, verbose=0) for chunk in data]
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        client.gather(client.map(model.predict, list(data[:2]), verbose=0, pure=False))  # warm-up
        start = time.perf_counter()
        scores = client.gather(client.map(model.predict, list(data), verbose=0, pure=False))
        elapsed = time.perf_counter() - start
    report(scores, expected, rel_tol=1e-3, tasks_per_s=CHUNKS / elapsed)


if __name__ == "__main__":
    main()
