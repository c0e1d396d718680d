"""`tf.data.Dataset.from_tensor_slices(...)` in eager mode, then a thread setting.

Making the dataset converts its rows to tensors eagerly, which starts the runtime: the setting
raises `RuntimeError: Inter op parallelism cannot be modified after initialization.`
"""
import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {
    "rule": "TFP402",
    "kind": "bad",
    "expect": {"outcome": "exception", "type": "RuntimeError", "match": "Inter op parallelism cannot be modified after initialization", "where": "parent"},
    "timeout": 40,
}

SIZE = 512


def load_rows():
    return np.random.default_rng(1).random((SIZE, SIZE), dtype=np.float32)


def main():
    rows = load_rows()
    dataset = tf.data.Dataset.from_tensor_slices(rows).batch(64)
    tf.config.threading.set_inter_op_parallelism_threads(2)
    total = sum(float(tf.reduce_sum(chunk)) for chunk in dataset)
    report(total, float(rows.sum()), rel_tol=1e-3)


if __name__ == "__main__":
    main()
