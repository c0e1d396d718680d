"""The "non-daemon pool" recipe (workers allowed to have children) after the parent used the model.

A forum favourite for nested pools: a Process whose `daemon` is always False, a fork context that
uses it, and a Pool subclass built on that context. It changes nothing about fork: the parent built
a Keras model and predicted, the workers' 512x512 predictions never return.
"""
import multiprocessing
import multiprocessing.pool

import keras
import numpy as np

from runtime_probe.support import report

PROBE = {"rule": "TFP201", "kind": "bad", "expect": {"outcome": "hang"}, "timeout": 40}

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
    model = build_model()
    seeds = [1, 2]
    expected = [float(model.predict(batch(seed), verbose=0).sum()) for seed in seeds]
    pool = NestablePool(2)
    try:
        totals = pool.map(score, seeds)
    finally:
        pool.close()
        pool.join()
    report(totals, expected, rel_tol=1e-3)


if __name__ == "__main__":
    main()
