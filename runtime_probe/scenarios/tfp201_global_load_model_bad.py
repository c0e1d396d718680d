"""A `load()` helper fills a module global with the Keras model; the parent calls it, then forks.

The pattern looks like the initializer recipe, but `load()` runs in the parent (in `main`), which
also checks the model. The forked workers inherit the global and an initialised runtime; their
predictions on 512-wide inputs never return.
"""
import multiprocessing as mp
import os
import tempfile

import keras
import numpy as np

from runtime_probe.support import report

PROBE = {"rule": "TFP201", "kind": "bad", "expect": {"outcome": "hang"}, "timeout": 40}

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
    with mp.get_context("fork").Pool(2) as pool:
        totals = pool.map(score, seeds)
    report(totals, expected, rel_tol=1e-3)


if __name__ == "__main__":
    main()
