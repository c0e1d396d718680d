"""`tf.config.set_logical_device_configuration` (split the CPU in two) after the first eager op.

Logical devices are fixed when the runtime starts; raises
`RuntimeError: Virtual devices cannot be modified after being initialized`.
"""
import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {
    "rule": "TFP402",
    "kind": "bad",
    "expect": {"outcome": "exception", "type": "RuntimeError", "match": "Virtual devices cannot be modified after being initialized", "where": "parent"},
    "timeout": 40,
}

SIZE = 512


def load_batch(seed):
    rows = tf.constant(np.random.default_rng(seed).random((SIZE, SIZE), dtype=np.float32))
    return rows / tf.reduce_max(rows)  # the first op: the runtime starts here


def configure():
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(
        cpu, [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()]
    )


def main():
    configure()
    batch = load_batch(1)
    total = float(tf.reduce_sum(tf.matmul(batch, batch)))
    expected = batch.numpy() @ batch.numpy()
    report(total, float(expected.sum()), rel_tol=1e-3)


if __name__ == "__main__":
    main()
