"""Each spawned worker builds its Explainer once, in `initializer=`, from the saved model.

The twin of tfp103_explainer_method_spawn_bad: the task is a module-level function and receives
only data; the model crosses once per worker, as a file path.
"""
import multiprocessing as mp
import os
import tempfile
import time

import keras
import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP103", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 120}

SIZE = 512
MODEL_PATH = os.path.join(tempfile.gettempdir(), "explained.keras")
explainer = None


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


def load_explainer(path):
    global explainer
    explainer = Explainer(keras.models.load_model(path))


def attributions(row, scale):
    return explainer.attributions(row, scale)


def worker_pid(_):
    time.sleep(0.2)
    return os.getpid()


def main():
    model = keras.Sequential(
        [keras.Input((SIZE,)), keras.layers.Dense(SIZE, activation="tanh"), keras.layers.Dense(1)]
    )
    model.save(MODEL_PATH)
    data = np.random.default_rng(1).random((32, SIZE), dtype=np.float32)
    expected = [Explainer(model).attributions(row, 1.0) for row in data]
    with mp.get_context("spawn").Pool(2, initializer=load_explainer, initargs=(MODEL_PATH,)) as pool:
        while len(set(pool.map(worker_pid, range(2), chunksize=1))) < 2:
            pass  # warm-up: until both workers have imported TF and are ready
        start = time.perf_counter()
        found = pool.starmap(attributions, [(row, 1.0) for row in data])
        elapsed = time.perf_counter() - start
    report(found, expected, rel_tol=1e-3, tasks_per_s=len(data) / elapsed)


if __name__ == "__main__":
    main()
