"""`multiprocess.Pool` from a spawn context; each worker loads the Keras model in `initializer=`.

The twin of tfp102_multiprocess_pool_keras_bad: the parent still predicts first, but the workers
start fresh interpreters and receive only the model's path and the data.
"""
import os
import tempfile

import keras
import multiprocess
import numpy as np

from runtime_probe.support import report

PROBE = {"rule": "TFP102", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 90}

SIZE = 512
MODEL_PATH = os.path.join(tempfile.gettempdir(), "scorer.keras")
model = None


def batch(seed):
    return np.random.default_rng(seed).random((SIZE, SIZE), dtype=np.float32)


def load_model(path):
    global model
    model = keras.models.load_model(path)


def score(seed):
    return float(model.predict(batch(seed), verbose=0).sum())


def main():
    trained = keras.Sequential(
        [keras.Input((SIZE,)), keras.layers.Dense(SIZE, activation="relu"), keras.layers.Dense(1)]
    )
    trained.save(MODEL_PATH)
    seeds = [1, 2]
    expected = [float(trained.predict(batch(seed), verbose=0).sum()) for seed in seeds]
    ctx = multiprocess.get_context("spawn")
    with ctx.Pool(2, initializer=load_model, initargs=(MODEL_PATH,)) as pool:
        totals = pool.map(score, seeds)
    report(totals, expected, rel_tol=1e-3)


if __name__ == "__main__":
    main()
