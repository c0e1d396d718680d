"""`tf.config.set_visible_devices([], "GPU")` before the first op: the run stays off the GPU.

The twin of tfp402_gpu_visible_devices_after_op_bad.
"""
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP402", "kind": "fixed", "gpus": 1, "expect": {"outcome": "ok"}, "timeout": 60}


def main():
    tf.config.set_visible_devices([], "GPU")
    total = float(tf.reduce_sum(tf.ones((256, 256))))
    report([total, len(tf.config.list_logical_devices("GPU"))], [65536.0, 0])


if __name__ == "__main__":
    main()
