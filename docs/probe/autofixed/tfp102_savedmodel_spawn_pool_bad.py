"""A loaded SavedModel sent to spawn pool workers: pickling fails in the parent (the fix loads it once per worker)."""
import multiprocessing as mp
import os
import tempfile

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {
    "rule": "TFP102",
    "kind": "bad",
    "expect": {"outcome": "exception", "type": "AttributeError", "match": "Can't pickle local object", "where": "parent"},
    "timeout": 40,
}

WEIGHTS = np.random.default_rng(0).random((16, 2), dtype=np.float32)


class Scorer(tf.Module):
    def __init__(self):
        super().__init__()
        self.weights = tf.Variable(WEIGHTS)

    @tf.function(input_signature=[tf.TensorSpec([None, 16], tf.float32)])
    def __call__(self, rows):
        return tf.matmul(rows, self.weights)


_scorer = None


def _init_scorer(path):
    global _scorer
    _scorer = tf.saved_model.load(path)


def predict(row):
    return _scorer(row[None]).numpy()[0]


def main():
    path = os.path.join(tempfile.mkdtemp(), "scorer")
    tf.saved_model.save(Scorer(), path)

    data = np.random.default_rng(1).random((4, 16), dtype=np.float32)
    with mp.get_context("spawn").Pool(2, initializer=_init_scorer, initargs=(path,)) as pool:
        scores = pool.starmap(predict, [(row,) for row in data])
    report(scores, data @ WEIGHTS)


if __name__ == "__main__":
    main()
