"""A bound method of a helper object holding a Keras model, as a fork pool's task.

`Explainer(model).attributions` is not a method of `self`, but pickling a bound method pickles its
object, so every task ships the model. The parent predicted first; the forked workers rebuild the
model while unpickling the task and never return.
"""
import multiprocessing as mp

import keras
import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP103", "kind": "bad", "expect": {"outcome": "hang"}, "timeout": 40}

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


def main():
    model = keras.Sequential(
        [keras.Input((SIZE,)), keras.layers.Dense(SIZE, activation="tanh"), keras.layers.Dense(1)]
    )
    data = np.random.default_rng(1).random((8, SIZE), dtype=np.float32)
    print("parent scores", model.predict(data, verbose=0).ravel()[:3])
    explainer = Explainer(model)
    expected = [explainer.attributions(row, 1.0) for row in data]
    with mp.get_context("fork").Pool(2) as pool:
        found = pool.starmap(explainer.attributions, [(row, 1.0) for row in data])
    report(found, expected, rel_tol=1e-3)


if __name__ == "__main__":
    main()
