"""Keras data workers (`PyDataset(workers=2, use_multiprocessing=True)`) under spawn, with `fit` at
module level and no `if __name__ == "__main__":` guard.

Keras starts its data workers with `multiprocessing.Pool` (the default context, here spawn) from a
feeder thread once `fit` pulls its first batch. Each spawned worker re-imports the script, whose
`set_start_method("spawn")` raises `RuntimeError: context has already been set` (without it, as under
Python 3.14's forkserver default, its own `fit` would start processes during bootstrapping): the worker
dies, the pool starts another, and `fit` waits forever inside TensorFlow's native code.
"""
import multiprocessing as mp

import keras
import numpy as np

from runtime_probe.support import report

PROBE = {"rule": "TFP202", "kind": "bad", "expect": {"outcome": "lost task"}, "timeout": 90}
# 90 s: each spawned worker imports TensorFlow (and Keras) before it dies; on a loaded 2-core machine
# the first deaths come after 20 s or more


class Rows(keras.utils.PyDataset):
    """4 batches of 16 rows of a fixed linear problem."""

    def __len__(self):
        return 4

    def __getitem__(self, index):
        x = np.random.default_rng(index).random((16, 4), dtype=np.float32)
        return x, x.sum(axis=1, keepdims=True)


if __name__ == "__main__":
    mp.set_start_method("spawn")
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    before = model.evaluate(Rows(), verbose=0)
    model.fit(Rows(workers=2, use_multiprocessing=True), epochs=1, verbose=0)
    report(model.evaluate(Rows(), verbose=0) < before, True)
