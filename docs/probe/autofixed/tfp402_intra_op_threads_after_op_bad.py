"""`tf.config.threading.set_intra_op_parallelism_threads(1)` after the first eager op.

The thread pools are created with the runtime, at the first op; changing their size
afterwards raises `RuntimeError: Intra op parallelism cannot be modified after initialization.`
"""
import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {
    "quick": True,
    "rule": "TFP402",
    "kind": "bad",
    "expect": {"outcome": "exception", "type": "RuntimeError", "match": "Intra op parallelism cannot be modified after initialization", "where": "parent"},
    "timeout": 40,
}

SIZE = 512


def load_batch(seed):
    rows = tf.constant(np.random.default_rng(seed).random((SIZE, SIZE), dtype=np.float32))
    return rows / tf.reduce_max(rows)  # the first op: the runtime starts here


def configure():
    tf.config.threading.set_intra_op_parallelism_threads(1)


def main():
    configure()
    batch = load_batch(1)
    total = float(tf.reduce_sum(tf.matmul(batch, batch)))
    expected = batch.numpy() @ batch.numpy()
    report(total, float(expected.sum()), rel_tol=1e-3)


if __name__ == "__main__":
    main()
