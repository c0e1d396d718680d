"""`os.environ["CUDA_VISIBLE_DEVICES"] = ""` after `import tensorflow` but before the first op: in effect.

The twin of tfp403_gpu_cuda_visible_devices_after_op_bad: importing TensorFlow does not initialise
CUDA, the first op does, so the variable set in between hides the GPUs.
"""
import os

import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP403", "kind": "fixed", "gpus": 1, "expect": {"outcome": "ok"}, "timeout": 60}


def main():
    os.environ["CUDA_VISIBLE_DEVICES"] = ""
    total = float(tf.reduce_sum(tf.ones((256, 256))))
    report([total, len(tf.config.list_logical_devices("GPU"))], [65536.0, 0])


if __name__ == "__main__":
    main()
