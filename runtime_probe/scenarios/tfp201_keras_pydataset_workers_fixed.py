"""The same `PyDataset` feeding `predict` from 2 forked workers, but batches made with numpy: works.

The near miss of tfp201_keras_pydataset_workers_bad: Keras' forked data workers are harmless as
long as `__getitem__` runs no TensorFlow op; the model (built in the parent) runs only in the parent.
"""
import keras
import numpy as np

from runtime_probe.support import report

PROBE = {"rule": "TFP201", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 60}

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
        return raw(index) @ MIX


def main():
    model = keras.Sequential([keras.Input((SIZE,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(1)])
    batches = MixedBatches(4, workers=2, use_multiprocessing=True)
    scores = model.predict(batches, verbose=0)
    expected = np.concatenate([model.predict_on_batch(raw(i) @ MIX) for i in range(4)])
    report(scores, expected, rel_tol=1e-3)


if __name__ == "__main__":
    main()
