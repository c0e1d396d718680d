"""Memory growth switched on after the GPU was initialised: TensorFlow refuses."""
import tensorflow as tf

from runtime_probe.support import report

PROBE = {
    "rule": "TFP402",
    "kind": "bad",
    "gpus": 1,
    "expect": {"outcome": "exception", "type": "RuntimeError", "match": "cannot be modified after", "where": "parent"},
    "timeout": 60,
}


def main():
    with tf.device("/GPU:0"):
        total = float(tf.reduce_sum(tf.ones((256, 256))))
    for gpu in tf.config.list_physical_devices("GPU"):
        tf.config.experimental.set_memory_growth(gpu, True)
    report(total, 65536.0)


if __name__ == "__main__":
    main()
