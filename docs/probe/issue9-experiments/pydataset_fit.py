"""Record only: the PyDataset of tfp201_keras_pydataset_workers_bad used in `fit` (not `predict`).

Batches are (x, y) made with a 512x512 TF matmul in `__getitem__`, workers=2,
use_multiprocessing=True, model built and compiled in the parent.
"""
import keras
import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP201", "kind": "bad", "expect": {"outcome": "hang"}, "timeout": 60}

SIZE = 512
MIX = np.random.default_rng(0).random((SIZE, SIZE), dtype=np.float32) / SIZE


def raw(index):
    return np.random.default_rng(index).random((SIZE, SIZE), dtype=np.float32)


class MixedBatches(keras.utils.PyDataset):
    def __init__(self, count, **kwargs):
        super().__init__(**kwargs)
        self.count = count

    def __len__(self):
        return self.count

    def __getitem__(self, index):
        x = tf.matmul(tf.constant(raw(index)), MIX).numpy()
        return x, x[:, :1]


def main():
    model = keras.Sequential([keras.Input((SIZE,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    history = model.fit(MixedBatches(4, workers=2, use_multiprocessing=True), epochs=1, verbose=0)
    report(len(history.history["loss"]), 1)


if __name__ == "__main__":
    main()
