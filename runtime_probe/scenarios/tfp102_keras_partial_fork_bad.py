"""A Keras model bound into the task with `functools.partial`, fork pool, after the parent predicted.

`pool.map(partial(score, model), seeds)` pickles the partial, and with it the model, for each chunk
of tasks even under fork. The forked workers rebuild the model while unpickling the task, in a
runtime whose thread pools they did not inherit, and never return.
"""
import multiprocessing as mp
from functools import partial

import keras
import numpy as np

from runtime_probe.support import report

PROBE = {"rule": "TFP102", "kind": "bad", "expect": {"outcome": "hang"}, "timeout": 40}

SIZE = 512


def batch(seed):
    return np.random.default_rng(seed).random((SIZE, SIZE), dtype=np.float32)


def score(model, seed):
    return float(model.predict(batch(seed), verbose=0).sum())


def main():
    model = keras.Sequential(
        [keras.Input((SIZE,)), keras.layers.Dense(SIZE, activation="relu"), keras.layers.Dense(1)]
    )
    seeds = [1, 2, 3, 4]
    expected = [score(model, seed) for seed in seeds]
    with mp.get_context("fork").Pool(2) as pool:
        totals = pool.map(partial(score, model), seeds)
    report(totals, expected, rel_tol=1e-3)


if __name__ == "__main__":
    main()
