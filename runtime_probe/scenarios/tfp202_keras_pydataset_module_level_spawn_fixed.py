"""The same spawn data workers, with the code that trains under `if __name__ == "__main__":`: works.

The twin of tfp202_keras_pydataset_module_level_spawn_bad: the workers still re-import the script,
but only to find the `PyDataset` class; training runs only in the parent.
"""
import multiprocessing as mp

import keras
import numpy as np

from runtime_probe.support import report

PROBE = {"rule": "TFP202", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 150}


class Rows(keras.utils.PyDataset):
    """4 batches of 16 rows of a fixed linear problem."""

    def __len__(self):
        return 4

    def __getitem__(self, index):
        x = np.random.default_rng(index).random((16, 4), dtype=np.float32)
        return x, x.sum(axis=1, keepdims=True)


def main():
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    before = model.evaluate(Rows(), verbose=0)
    model.fit(Rows(workers=2, use_multiprocessing=True), epochs=1, verbose=0)
    report(model.evaluate(Rows(), verbose=0) < before, True)


if __name__ == "__main__":
    mp.set_start_method("spawn")
    main()
