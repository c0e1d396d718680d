"""Ray: the task returns the arrays; the driver builds the tf.data.Dataset."""
import numpy as np
import ray
import tensorflow as tf

from runtime_probe.support import report, start_ray

PROBE = {"rule": "TFP102", "kind": "fixed", "requires": ["ray"], "expect": {"outcome": "ok"}, "timeout": 300}


@ray.remote
def prepare(seed):
    return np.random.default_rng(seed).random((64, 4)).astype(np.float32)


def main():
    start_ray()
    try:
        arrays = ray.get([prepare.remote(seed) for seed in range(2)])
        batches = [sum(1 for _ in tf.data.Dataset.from_tensor_slices(features).batch(16)) for features in arrays]
        report(batches, [4, 4])
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
