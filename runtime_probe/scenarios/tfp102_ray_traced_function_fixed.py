"""Ray: the task makes its own tf.function; the driver sends only numbers."""
import ray
import tensorflow as tf

from runtime_probe.support import report, start_ray

PROBE = {"rule": "TFP102", "kind": "fixed", "requires": ["ray"], "expect": {"outcome": "ok"}, "timeout": 300}


@ray.remote
def apply(x):
    double = tf.function(lambda v: v * 2.0)
    return float(double(tf.constant(x)))


def main():
    start_ray()
    try:
        values = ray.get([apply.remote(float(x)) for x in range(4)])
        report(values, [2.0 * x for x in range(4)])
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
