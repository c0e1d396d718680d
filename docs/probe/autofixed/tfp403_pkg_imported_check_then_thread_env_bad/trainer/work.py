"""The work (768x768 products), and the number of threads of this process."""
import numpy as np
import tensorflow as tf

SIZE = 768


def work():
    m = tf.constant(np.random.default_rng(0).random((SIZE, SIZE), dtype=np.float32))
    return [float(tf.reduce_sum(tf.matmul(m, m))) for _ in range(3)]


def thread_count():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    raise RuntimeError("no Threads line in /proc/self/status")
