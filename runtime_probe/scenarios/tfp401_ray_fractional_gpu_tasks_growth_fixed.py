"""Ray: the twin of tfp401_ray_fractional_gpu_tasks_bad; each task turns on memory growth before
its first op, so the two half-GPU tasks take only what they use. Needs a GPU: skipped elsewhere.
"""
import time

import ray
import tensorflow as tf

from runtime_probe.support import report, start_ray

PROBE = {"rule": "TFP401", "kind": "fixed", "gpus": 1, "requires": ["ray"], "expect": {"outcome": "ok"},
         "timeout": 300}

ROWS = 1024  # x 2**20 float32 = 4 GiB per task


@ray.remote(num_gpus=0.5)
def fill(value):
    for gpu in tf.config.list_physical_devices("GPU"):
        tf.config.experimental.set_memory_growth(gpu, True)
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
