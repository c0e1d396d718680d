"""Memory growth switched on before the first GPU op: accepted, and in effect.

The twin of tfp402_gpu_memory_growth_after_op_bad: the same loop, moved before the op.
"""
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP402", "kind": "fixed", "gpus": 1, "expect": {"outcome": "ok"}, "timeout": 60}


def main():
    for gpu in tf.config.list_physical_devices("GPU"):
        tf.config.experimental.set_memory_growth(gpu, True)
    with tf.device("/GPU:0"):
        total = float(tf.reduce_sum(tf.ones((256, 256))))
    growth = [tf.config.experimental.get_memory_growth(gpu) for gpu in tf.config.list_physical_devices("GPU")]
    report([total, all(growth)], [65536.0, True])


if __name__ == "__main__":
    main()
