"""A Keras model sent to `multiprocess.Pool` tasks after the parent predicted with it.

`multiprocess` forks by default on Linux (Python < 3.14), like multiprocessing. dill serialises the
model with every task; the forked workers rebuild it and their 512x512 predictions never return.
"""
import keras
import multiprocess
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
    seeds = [1, 2]
    expected = [float(model.predict(batch(seed), verbose=0).sum()) for seed in seeds]
    with multiprocess.Pool(2) as pool:
        totals = pool.starmap(score, [(model, seed) for seed in seeds])
    report(totals, expected, rel_tol=1e-3)


if __name__ == "__main__":
    main()
