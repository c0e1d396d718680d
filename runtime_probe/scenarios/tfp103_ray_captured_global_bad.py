"""Ray: a task reads a module-level tf.function that the driver has called (traced).

Ray pickles a `__main__` function by value with the globals it reads: `TypeError: Could not
serialize the function ...` from .remote(), in the driver.
"""
import ray
import tensorflow as tf

from runtime_probe.support import report, start_ray

PROBE = {
    "rule": "TFP103",
    "kind": "bad",
    "requires": ["ray"],
    "expect": {"outcome": "exception", "type": "TypeError", "match": "Could not serialize the function",
               "where": "parent"},
    "timeout": 300,
}

triple = tf.function(lambda v: v * 3.0)


@ray.remote
def apply(x):
    return float(triple(tf.constant(x)))


def main():
    print("driver", float(triple(tf.constant(1.0))))  # traces it
    start_ray()
    try:
        report(ray.get([apply.remote(float(x)) for x in range(4)]), [3.0 * x for x in range(4)])
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
