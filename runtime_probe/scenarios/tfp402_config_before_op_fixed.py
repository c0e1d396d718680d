"""Thread counts and logical devices configured before the first op: accepted and in effect.

The twin of the tfp402_*_after_op_bad scenarios: the same three calls, made before `load_batch`
starts the runtime. The result checks that they took effect (1 intra-op and 1 inter-op thread
reported, two logical CPUs).
"""
import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"quick": True, "rule": "TFP402", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 40}

SIZE = 512


def load_batch(seed):
    rows = tf.constant(np.random.default_rng(seed).random((SIZE, SIZE), dtype=np.float32))
    return rows / tf.reduce_max(rows)  # the first op: the runtime starts here


def configure():
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(
        cpu, [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()]
    )


def main():
    configure()
    batch = load_batch(1)
    total = float(tf.reduce_sum(tf.matmul(batch, batch)))
    expected = batch.numpy() @ batch.numpy()
    settings = [
        tf.config.threading.get_intra_op_parallelism_threads(),
        tf.config.threading.get_inter_op_parallelism_threads(),
        len(tf.config.list_logical_devices("CPU")),
    ]
    report([total, *settings], [float(expected.sum()), 1, 1, 2], rel_tol=1e-3)


if __name__ == "__main__":
    main()
