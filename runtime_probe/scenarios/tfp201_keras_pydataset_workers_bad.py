"""A Keras `PyDataset` with `workers=2, use_multiprocessing=True` whose batches are made with TF ops.

Keras 3 feeds `fit`/`predict` from a `multiprocessing.Pool` of the default start method (fork on
Linux, Python < 3.14), created by a feeder thread once iteration starts - after the model was built
in the parent, which starts the runtime. Each batch runs a 512x512 matmul in a worker: it never
returns, and `predict` waits forever.
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
    """Batches of 512 rows, each row mixed with a fixed 512x512 matrix on the fly."""

    def __init__(self, count, **kwargs):
        super().__init__(**kwargs)
        self.count = count

    def __len__(self):
        return self.count

    def __getitem__(self, index):
        return tf.matmul(tf.constant(raw(index)), MIX).numpy()


def main():
    model = keras.Sequential([keras.Input((SIZE,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(1)])
    batches = MixedBatches(4, workers=2, use_multiprocessing=True)
    scores = model.predict(batches, verbose=0)
    expected = np.concatenate([model.predict_on_batch(raw(i) @ MIX) for i in range(4)])
    report(scores, expected, rel_tol=1e-3)


if __name__ == "__main__":
    main()
