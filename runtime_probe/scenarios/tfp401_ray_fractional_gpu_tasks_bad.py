"""Ray: two tasks that ask for half a GPU each run TensorFlow with its default memory policy.

Ray packs both onto the one GPU and does not limit their memory; the first to start maps nearly all
of it (TF GPU guide; tensorflow/tensorflow#14231, #30594), so the second fails allocating its
block: `ray.get` raises the worker's ResourceExhaustedError wrapped (`RayTaskError(...)`). Needs a
GPU: skipped elsewhere (runtime-facts §5 and §7).
"""
import time

import ray
import tensorflow as tf

from runtime_probe.support import report, start_ray

PROBE = {
    "rule": "TFP401",
    "kind": "bad",
    "gpus": 1,
    "requires": ["ray"],
    "expect": {"outcome": "exception", "type": "RayTaskError(ResourceExhaustedError)",
               "match": "(?i)out of memory|OOM", "where": "parent"},
    "timeout": 300,
}

ROWS = 1024  # x 2**20 float32 = 4 GiB per task


@ray.remote(num_gpus=0.5)
def fill(value):
    with tf.device("/GPU:0"):
        block = tf.fill((ROWS, 1 << 20), float(value))
    time.sleep(5)  # both tasks hold their block at the same time, in two workers
    return float(tf.reduce_mean(block))


def main():
    start_ray()
    try:
        report(ray.get([fill.remote(1), fill.remote(2)]), [1.0, 2.0])
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
