"""Two spawned workers share one GPU with TensorFlow's default memory policy.

Reported (TF GPU guide, tensorflow/tensorflow#14231, #30594): the first process maps nearly all
GPU memory, the second one runs out of memory.
"""
import multiprocessing as mp

import tensorflow as tf

from runtime_probe.support import report

PROBE = {
    "rule": "TFP401",
    "kind": "bad",
    "gpus": 1,
    "expect": {
        "outcome": "exception",
        "type": "ResourceExhaustedError",
        "match": "(?i)out of memory|OOM",
        "where": "worker",
    },
    "timeout": 120,
}

ROWS = 1024  # x 2**20 float32 = 4 GiB per worker
barrier = None


def keep(shared_barrier):
    global barrier
    for gpu in tf.config.list_physical_devices("GPU"):
        tf.config.experimental.set_memory_growth(gpu, True)
    barrier = shared_barrier


def fill(value):
    with tf.device("/GPU:0"):
        block = tf.fill((ROWS, 1 << 20), float(value))
    barrier.wait(timeout=60)  # both workers hold their block at the same time
    return float(tf.reduce_mean(block))


def main():
    ctx = mp.get_context("spawn")
    with ctx.Pool(2, initializer=keep, initargs=(ctx.Barrier(2),)) as pool:
        means = pool.map(fill, [1, 2], chunksize=1)
    report(means, [1.0, 2.0])


if __name__ == "__main__":
    main()
