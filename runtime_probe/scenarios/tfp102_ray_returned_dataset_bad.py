"""Ray: a task builds a tf.data.Dataset and returns it to the driver.

Ray pickles a task's result in the worker with cloudpickle; a Dataset does not pickle (its variant
tensor), and `ray.get` raises the worker's error wrapped: `RayTaskError(InvalidArgumentError)`.
"""
import numpy as np
import ray
import tensorflow as tf

from runtime_probe.support import report, start_ray

PROBE = {
    "rule": "TFP102",
    "kind": "bad",
    "requires": ["ray"],
    "expect": {"outcome": "exception", "type": "RayTaskError(InvalidArgumentError)", "where": "parent"},
    "timeout": 300,
}


@ray.remote
def prepare(seed):
    features = np.random.default_rng(seed).random((64, 4)).astype(np.float32)
    dataset = tf.data.Dataset.from_tensor_slices(features).batch(16)
    return dataset


def main():
    start_ray()
    try:
        batches = [sum(1 for _ in dataset) for dataset in ray.get([prepare.remote(seed) for seed in range(2)])]
        report(batches, [4, 4])
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
