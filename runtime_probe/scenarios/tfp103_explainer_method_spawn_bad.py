"""A bound method of a helper object holding a Keras model, as a spawn pool's task.

It works under spawn, but pickling a bound method pickles its object: every task ships the whole
model and the worker rebuilds it. Compare tfp103_explainer_initializer_fixed (tasks/s).
"""
import multiprocessing as mp
import os
import time

import keras
import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {
    "rule": "TFP103",
    "kind": "bad",
    "expect": {"outcome": "ok", "slower_than": {"scenario": "tfp103_explainer_initializer_fixed", "factor": 3}},
    "timeout": 120,
}

SIZE = 512


class Explainer:
    """Input-gradient attributions: how much each feature moves the score."""

    def __init__(self, model):
        self.model = model

    def attributions(self, row, scale):
        x = tf.constant(row[None] * scale)
        with tf.GradientTape() as tape:
            tape.watch(x)
            score = tf.reduce_sum(self.model(x))
        return tape.gradient(score, x).numpy()[0]


def worker_pid(_):
    time.sleep(0.2)
    return os.getpid()


def main():
    model = keras.Sequential(
        [keras.Input((SIZE,)), keras.layers.Dense(SIZE, activation="tanh"), keras.layers.Dense(1)]
    )
    data = np.random.default_rng(1).random((32, SIZE), dtype=np.float32)
    explainer = Explainer(model)
    expected = [explainer.attributions(row, 1.0) for row in data]
    with mp.get_context("spawn").Pool(2) as pool:
        while len(set(pool.map(worker_pid, range(2), chunksize=1))) < 2:
            pass  # warm-up: until both workers have imported TF and are ready
        start = time.perf_counter()
        found = pool.starmap(explainer.attributions, [(row, 1.0) for row in data])
        elapsed = time.perf_counter() - start
    report(found, expected, rel_tol=1e-3, tasks_per_s=len(data) / elapsed)


if __name__ == "__main__":
    main()
