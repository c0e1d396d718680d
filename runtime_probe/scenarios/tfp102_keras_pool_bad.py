"""A Keras model sent to forked pool workers: it pickles, but the workers' predict never returns."""
import multiprocessing as mp

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"quick": True, "rule": "TFP102", "kind": "bad", "expect": {"outcome": "hang"}, "timeout": 40}


def predict(model, row):
    return model.predict(row[None], verbose=0)[0]


def main():
    model = tf.keras.Sequential(
        [tf.keras.Input((16,)), tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(1)]
    )
    data = np.random.default_rng(1).random((4, 16), dtype=np.float32)
    expected = model.predict(data, verbose=0)

    with mp.Pool(2) as pool:
        scores = pool.starmap(predict, [(model, row) for row in data])
    report(scores, expected)


if __name__ == "__main__":
    main()
