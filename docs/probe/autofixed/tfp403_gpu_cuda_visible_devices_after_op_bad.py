"""`os.environ["CUDA_VISIBLE_DEVICES"] = ""` (keep this job off the GPUs) after the first op: ignored.

CUDA reads the variable once, when TensorFlow initialises it for the first op; afterwards the
process keeps every GPU it saw. Observable: the logical GPUs TensorFlow reports after the setting
(1 or more, where the job meant 0).
"""
import os

import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP403", "kind": "bad", "gpus": 1, "expect": {"outcome": "wrong result"}, "timeout": 60}


def main():
    os.environ["CUDA_VISIBLE_DEVICES"] = ""
    total = float(tf.reduce_sum(tf.ones((256, 256))))  # the runtime (and CUDA) start here
    report([total, len(tf.config.list_logical_devices("GPU"))], [65536.0, 0])


if __name__ == "__main__":
    main()
