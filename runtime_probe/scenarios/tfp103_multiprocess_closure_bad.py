"""A closure over a Keras model as the `multiprocess.Pool` task, after the parent predicted.

dill pickles nested functions with their closure cells, so the task ships the model: under the
default fork start method the workers rebuild it and their 512x512 predictions never return.
"""
import keras
import multiprocess
import numpy as np

from runtime_probe.support import report

PROBE = {"rule": "TFP103", "kind": "bad", "expect": {"outcome": "hang"}, "timeout": 40}

SIZE = 512


def batch(seed):
    return np.random.default_rng(seed).random((SIZE, SIZE), dtype=np.float32)


def make_scorer(model):
    def score(seed):
        return float(model.predict(batch(seed), verbose=0).sum())

    return score


def main():
    model = keras.Sequential(
        [keras.Input((SIZE,)), keras.layers.Dense(SIZE, activation="relu"), keras.layers.Dense(1)]
    )
    seeds = [1, 2]
    expected = [float(model.predict(batch(seed), verbose=0).sum()) for seed in seeds]
    with multiprocess.Pool(2) as pool:
        totals = pool.map(make_scorer(model), seeds)
    report(totals, expected, rel_tol=1e-3)


if __name__ == "__main__":
    main()
