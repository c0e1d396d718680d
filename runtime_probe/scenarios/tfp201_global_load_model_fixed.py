"""The same `load()` helper, run by each spawned worker as its `initializer`.

The twin of tfp201_global_load_model_bad: the parent still trains, saves and checks the model, but
the workers start from fresh interpreters and fill their own global.
"""
import multiprocessing as mp
import os
import tempfile

import keras
import numpy as np

from runtime_probe.support import report

PROBE = {"rule": "TFP201", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 90}

SIZE = 512
MODEL_PATH = os.path.join(tempfile.gettempdir(), "ranker.keras")
model = None


def batch(seed):
    return np.random.default_rng(seed).random((SIZE, SIZE), dtype=np.float32)


def load():
    global model
    model = keras.models.load_model(MODEL_PATH)


def score(seed):
    return float(model.predict(batch(seed), verbose=0).sum())


def train_and_save():
    trained = keras.Sequential(
        [keras.Input((SIZE,)), keras.layers.Dense(SIZE, activation="relu"), keras.layers.Dense(1)]
    )
    trained.save(MODEL_PATH)


def main():
    train_and_save()
    load()
    seeds = [1, 2]
    expected = [score(seed) for seed in seeds]  # the parent checks the model
    with mp.get_context("spawn").Pool(2, initializer=load) as pool:
        totals = pool.map(score, seeds)
    report(totals, expected, rel_tol=1e-3)


if __name__ == "__main__":
    main()
