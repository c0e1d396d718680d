"""Two spawned workers share one GPU; each caps its memory with a logical device limit."""
import multiprocessing as mp

import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP401", "kind": "fixed", "gpus": 1, "expect": {"outcome": "ok"}, "timeout": 120}

ROWS = 1024  # x 2**20 float32 = 4 GiB per worker
barrier = None


def setup(shared_barrier):
    global barrier
    barrier = shared_barrier
    gpu = tf.config.list_physical_devices("GPU")[0]
    tf.config.set_logical_device_configuration(gpu, [tf.config.LogicalDeviceConfiguration(memory_limit=8192)])


def fill(value):
    with tf.device("/GPU:0"):
        block = tf.fill((ROWS, 1 << 20), float(value))
    barrier.wait(timeout=60)  # both workers hold their block at the same time
    return float(tf.reduce_mean(block))


def main():
    ctx = mp.get_context("spawn")
    with ctx.Pool(2, initializer=setup, initargs=(ctx.Barrier(2),)) as pool:
        means = pool.map(fill, [1, 2], chunksize=1)
    report(means, [1.0, 2.0])


if __name__ == "__main__":
    main()
