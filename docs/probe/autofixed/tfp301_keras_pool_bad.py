"""The pool callable loads the Keras model on every task (spawned workers, no initializer)."""
import multiprocessing as mp
import os
import tempfile
import time

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {
    "quick": True,
    "rule": "TFP301",
    "kind": "bad",
    "expect": {"outcome": "ok", "slower_than": {"scenario": "tfp301_keras_pool_fixed", "factor": 3}},
    "timeout": 90,
}

MODEL_PATH = os.path.join(tempfile.gettempdir(), "tfp301_keras.keras")


_model = None


def _init_predict():
    global _model
    _model = tf.keras.models.load_model(MODEL_PATH)


def predict(row):
    return _model.predict_on_batch(row[None])[0]


def main():
    model = tf.keras.Sequential(
        [tf.keras.Input((64,)), tf.keras.layers.Dense(256, activation="relu"), tf.keras.layers.Dense(1)]
    )
    model.save(MODEL_PATH)
    data = np.random.default_rng(1).random((32, 64), dtype=np.float32)
    expected = model.predict(data, verbose=0)

    with mp.get_context("spawn").Pool(2, initializer=_init_predict) as pool:
        pool.map(predict, data[:2])  # warm-up: the workers import TensorFlow
        start = time.perf_counter()
        scores = pool.map(predict, data)
        elapsed = time.perf_counter() - start
    report(scores, expected, tasks_per_s=len(data) / elapsed)


if __name__ == "__main__":
    main()
