"""A tf.function sent to pool workers: pickling the task fails in the parent."""
import multiprocessing as mp

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {
    "rule": "TFP102",
    "kind": "bad",
    "expect": {"outcome": "exception", "type": "PicklingError", "match": "Can't pickle", "where": "parent"},
    "timeout": 40,
}


@tf.function
def normalize(row):
    return row / tf.reduce_sum(row)


def apply(fn, row):
    return fn(row).numpy()


def main():
    data = np.random.default_rng(1).random((4, 16), dtype=np.float32)
    with mp.Pool(2) as pool:
        results = pool.starmap(apply, [(normalize, row) for row in data])
    report(results, data / data.sum(axis=1, keepdims=True))


if __name__ == "__main__":
    main()
