"""Ray: the same global tf.function, never called in the driver: it pickles untraced."""
import ray
import tensorflow as tf

from runtime_probe.support import report, start_ray

PROBE = {"rule": "TFP103", "kind": "fixed", "requires": ["ray"], "expect": {"outcome": "ok"}, "timeout": 300}

triple = tf.function(lambda v: v * 3.0)


@ray.remote
def apply(x):
    return float(triple(tf.constant(x)))


def main():
    start_ray()
    try:
        report(ray.get([apply.remote(float(x)) for x in range(4)]), [3.0 * x for x in range(4)])
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
