"""A lambda over a module-level Keras model submitted to a spawn `ProcessPoolExecutor`.

The executor pickles the callable with pickle, which stores functions by name: a lambda made in a
function has none to look up (`AttributeError: Can't pickle local object`), and `result()` raises
it in the parent. The module-level model is no help: pickle never gets as far as the globals.
"""
import multiprocessing as mp
from concurrent.futures import ProcessPoolExecutor

import keras
import numpy as np

from runtime_probe.support import report

PROBE = {
    "rule": "TFP103",
    "kind": "bad",
    "expect": {"outcome": "exception", "type": "AttributeError", "match": "Can't pickle local object", "where": "parent"},
    "timeout": 150,
}

SIZE = 256


def batch(seed):
    return np.random.default_rng(seed).random((SIZE, SIZE), dtype=np.float32)


model = keras.Sequential([keras.Input((SIZE,)), keras.layers.Dense(SIZE, activation="relu"), keras.layers.Dense(1)])


def main():
    seeds = [1, 2]
    expected = [float(model.predict(batch(seed), verbose=0).sum()) for seed in seeds]
    with ProcessPoolExecutor(1, mp_context=mp.get_context("spawn")) as executor:
        futures = [executor.submit(lambda s: float(model.predict(batch(s), verbose=0).sum()), seed) for seed in seeds]
        totals = [future.result() for future in futures]
    report(totals, expected, rel_tol=1e-3)


if __name__ == "__main__":
    main()
