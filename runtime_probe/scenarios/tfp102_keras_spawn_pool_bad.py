"""A Keras model sent with every task to spawned pool workers.

It works (Keras 3 models pickle), but every task ships the whole model and the worker rebuilds it.
"""
import multiprocessing as mp
import time

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {
    "rule": "TFP102",
    "kind": "bad",
    "expect": {"outcome": "ok", "slower_than": {"scenario": "tfp102_keras_pool_fixed", "factor": 3}},
    "timeout": 90,
}


def predict(model, row):
    return model.predict_on_batch(row[None])[0]


def main():
    model = tf.keras.Sequential(
        [tf.keras.Input((16,)), tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(1)]
    )
    data = np.random.default_rng(1).random((32, 16), dtype=np.float32)
    expected = model.predict(data, verbose=0)

    with mp.get_context("spawn").Pool(2) as pool:
        pool.starmap(predict, [(model, row) for row in data[:2]])  # warm-up: the workers import TensorFlow
        start = time.perf_counter()
        scores = pool.starmap(predict, [(model, row) for row in data])
        elapsed = time.perf_counter() - start
    report(scores, expected, tasks_per_s=len(data) / elapsed)


if __name__ == "__main__":
    main()
