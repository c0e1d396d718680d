"""The "non-daemon pool" recipe, started before the parent touches Keras: works.

The twin of tfp201_nodaemon_pool_bad: the same NestablePool on a fork context, but the parent builds
and runs its own copy of the model only after the pool is done. This also shows that the recipe
itself works; what hangs the bad twin is the parent's runtime.
"""
import multiprocessing
import multiprocessing.pool

import keras
import numpy as np

from runtime_probe.support import report

PROBE = {"rule": "TFP201", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 60}

SIZE = 512


class NoDaemonProcess(multiprocessing.Process):
    @property
    def daemon(self):
        return False

    @daemon.setter
    def daemon(self, value):
        pass


class NoDaemonContext(type(multiprocessing.get_context("fork"))):
    Process = NoDaemonProcess


class NestablePool(multiprocessing.pool.Pool):
    def __init__(self, *args, **kwargs):
        kwargs["context"] = NoDaemonContext()
        super().__init__(*args, **kwargs)


def batch(seed):
    return np.random.default_rng(seed).random((SIZE, SIZE), dtype=np.float32)


def build_model():
    keras.utils.set_random_seed(0)
    return keras.Sequential([keras.Input((SIZE,)), keras.layers.Dense(SIZE, activation="relu"), keras.layers.Dense(1)])


def score(seed):
    return float(build_model().predict(batch(seed), verbose=0).sum())


def main():
    seeds = [1, 2]
    pool = NestablePool(2)
    try:
        totals = pool.map(score, seeds)
    finally:
        pool.close()
        pool.join()
    model = build_model()
    expected = [float(model.predict(batch(seed), verbose=0).sum()) for seed in seeds]
    report(totals, expected, rel_tol=1e-3)


if __name__ == "__main__":
    main()
