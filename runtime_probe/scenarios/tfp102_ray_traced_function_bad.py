"""Ray: a tf.function that the driver has called (traced) given to a task as its argument.

Ray pickles task arguments with cloudpickle in the driver; a traced tf.function holds a FuncGraph,
which does not pickle: `TypeError: Could not serialize the argument <...Function>` from .remote().
"""
import numpy as np
import ray
import tensorflow as tf

from runtime_probe.support import report, start_ray

PROBE = {
    "rule": "TFP102",
    "kind": "bad",
    "requires": ["ray"],
    "expect": {"outcome": "exception", "type": "TypeError", "match": "Could not serialize the argument",
               "where": "parent"},
    "timeout": 300,
}


@tf.function
def double(x):
    return x * 2.0


@ray.remote
def apply(fn, x):
    return float(fn(tf.constant(x)))


def main():
    start_ray()
    try:
        print("driver", float(double(tf.constant(1.0))))  # traces it
        values = ray.get([apply.remote(double, float(x)) for x in range(4)])
        report(values, [2.0 * x for x in range(4)])
    finally:
        ray.shutdown()


if __name__ == "__main__":
    np.random.seed(0)
    main()
