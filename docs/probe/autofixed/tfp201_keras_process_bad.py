"""The parent calls Keras `predict`, then forks Processes that build and run the same model."""
import multiprocessing as mp

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP201", "kind": "bad", "expect": {"outcome": "hang"}, "timeout": 30}


def build_model():
    return tf.keras.Sequential(
        [tf.keras.Input((64,)), tf.keras.layers.Dense(256, activation="relu"), tf.keras.layers.Dense(1)]
    )


def predict(weights, index, rows, results):
    model = build_model()
    model.set_weights(weights)
    results.put((index, model.predict(rows, verbose=0)))


def main():
    model = build_model()
    data = np.random.default_rng(1).random((64, 64), dtype=np.float32)
    expected = model.predict(data, verbose=0)

    results = mp.get_context("spawn").Queue()
    chunks = np.array_split(data, 2)
    workers = [
        mp.get_context("spawn").Process(target=predict, args=(model.get_weights(), index, chunk, results))
        for index, chunk in enumerate(chunks)
    ]
    for worker in workers:
        worker.start()
    parts = dict(results.get() for _ in workers)
    for worker in workers:
        worker.join()
    report(np.concatenate([parts[index] for index in range(len(chunks))]), expected)


if __name__ == "__main__":
    main()
