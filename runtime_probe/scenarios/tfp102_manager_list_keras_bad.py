"""A Keras model put in a `Manager().list()` after the parent predicted with it.

The proxy pickles the model (Keras 3 models pickle) and the manager's server process - forked from
the parent when the Manager started - unpickles it, which rebuilds the model and runs TF ops there.
The server thread never returns, so `append` waits forever in the parent.
"""
import multiprocessing as mp

import keras
import numpy as np

from runtime_probe.support import report

PROBE = {"rule": "TFP102", "kind": "bad", "expect": {"outcome": "hang"}, "timeout": 40}

SIZE = 512


def batch(seed):
    return np.random.default_rng(seed).random((SIZE, SIZE), dtype=np.float32)


def score(shared, seed):
    return float(shared[0].predict(batch(seed), verbose=0).sum())


def main():
    model = keras.Sequential(
        [keras.Input((SIZE,)), keras.layers.Dense(SIZE, activation="relu"), keras.layers.Dense(1)]
    )
    seeds = [1, 2]
    expected = [float(model.predict(batch(seed), verbose=0).sum()) for seed in seeds]
    with mp.Manager() as manager:
        shared = manager.list()
        shared.append(model)
        print("model stored in the manager", flush=True)
        with mp.get_context("spawn").Pool(2) as pool:
            totals = pool.starmap(score, [(shared, seed) for seed in seeds])
    report(totals, expected, rel_tol=1e-3)


if __name__ == "__main__":
    main()
