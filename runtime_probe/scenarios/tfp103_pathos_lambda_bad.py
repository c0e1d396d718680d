"""pathos `ProcessPool.map` with a lambda over a Keras model, after the parent predicted.

pathos runs on `multiprocess` (dill), so lambdas are fine to send and the captured model goes
with them; under its default fork start method the workers' 512x512 predictions never return.
"""
import keras
import numpy as np
from pathos.multiprocessing import ProcessPool

from runtime_probe.support import report

PROBE = {"rule": "TFP103", "kind": "bad", "expect": {"outcome": "hang"}, "timeout": 40}

SIZE = 512


def batch(seed):
    return np.random.default_rng(seed).random((SIZE, SIZE), dtype=np.float32)


def main():
    model = keras.Sequential(
        [keras.Input((SIZE,)), keras.layers.Dense(SIZE, activation="relu"), keras.layers.Dense(1)]
    )
    seeds = [1, 2]
    expected = [float(model.predict(batch(seed), verbose=0).sum()) for seed in seeds]
    pool = ProcessPool(nodes=2)
    totals = pool.map(lambda seed: float(model.predict(batch(seed), verbose=0).sum()), seeds)
    pool.close()
    pool.join()
    report(totals, expected, rel_tol=1e-3)


if __name__ == "__main__":
    main()
