"""A Keras model put in a `Manager().list()` of a spawn context: stored, read back, predicts.

The twin of tfp102_manager_list_keras_bad: the manager's server process is a fresh interpreter, so
unpickling (rebuilding) the model there works, and spawned workers fetch their own copy once.
"""
import multiprocessing as mp

import keras
import numpy as np

from runtime_probe.support import report

PROBE = {"rule": "TFP102", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 120}

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
    ctx = mp.get_context("spawn")
    with ctx.Manager() as manager:
        shared = manager.list()
        shared.append(model)
        print("model stored in the manager", flush=True)
        with ctx.Pool(2) as pool:
            totals = pool.starmap(score, [(shared, seed) for seed in seeds])
    report(totals, expected, rel_tol=1e-3)


if __name__ == "__main__":
    main()
