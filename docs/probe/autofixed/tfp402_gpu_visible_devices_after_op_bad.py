"""`tf.config.set_visible_devices([], "GPU")` (keep the rest of the run off the GPUs) after the first op.

On a machine with a GPU the devices exist once an op ran; TensorFlow refuses with
`RuntimeError: Visible devices cannot be modified after being initialized`. (On a CPU-only machine
the visible list does not change, so the same call passes: the bug only shows on the GPU server.)
"""
import tensorflow as tf

from runtime_probe.support import report

PROBE = {
    "rule": "TFP402",
    "kind": "bad",
    "gpus": 1,
    "expect": {"outcome": "exception", "type": "RuntimeError",
               "match": "Visible devices cannot be modified after being initialized", "where": "parent"},
    "timeout": 60,
}


def main():
    tf.config.set_visible_devices([], "GPU")
    total = float(tf.reduce_sum(tf.ones((256, 256))))  # the runtime starts here, with the GPU
    report([total, len(tf.config.list_logical_devices("GPU"))], [65536.0, 0])


if __name__ == "__main__":
    main()
