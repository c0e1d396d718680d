"""Two spawned workers, one GPU each: CUDA_VISIBLE_DEVICES is set before TensorFlow uses CUDA."""
import multiprocessing as mp
import os

import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP401", "kind": "fixed", "gpus": 2, "expect": {"outcome": "ok"}, "timeout": 120}

ROWS = 1024  # x 2**20 float32 = 4 GiB per worker
barrier = None


def setup(shared_barrier, counter):
    global barrier
    barrier = shared_barrier
    with counter.get_lock():
        os.environ["CUDA_VISIBLE_DEVICES"] = str(counter.value)
        counter.value += 1


def fill(value):
    with tf.device("/GPU:0"):
        block = tf.fill((ROWS, 1 << 20), float(value))
    barrier.wait(timeout=60)  # both workers hold their block at the same time
    return float(tf.reduce_mean(block))


def main():
    ctx = mp.get_context("spawn")
    initargs = (ctx.Barrier(2), ctx.Value("i", 0))
    with ctx.Pool(2, initializer=setup, initargs=initargs) as pool:
        means = pool.map(fill, [1, 2], chunksize=1)
    report(means, [1.0, 2.0])


if __name__ == "__main__":
    main()
