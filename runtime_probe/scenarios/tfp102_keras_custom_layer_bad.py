"""A Keras model with an unregistered custom layer sent to spawned pool workers.

The model pickles in the parent, the worker dies while unpickling the task, the pool replaces
the worker and `map` never returns.
"""
import multiprocessing as mp

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP102", "kind": "bad", "expect": {"outcome": "lost task"}, "timeout": 60}


class Scale(tf.keras.layers.Layer):
    def call(self, inputs):
        return inputs * 2.0


def predict(model, row):
    return model.predict(row[None], verbose=0)[0]


def main():
    model = tf.keras.Sequential([tf.keras.Input((16,)), tf.keras.layers.Dense(1), Scale()])
    data = np.random.default_rng(1).random((2, 16), dtype=np.float32)
    expected = model.predict(data, verbose=0)

    with mp.get_context("spawn").Pool(2) as pool:
        scores = pool.starmap(predict, [(model, row) for row in data])
    report(scores, expected)


if __name__ == "__main__":
    main()
