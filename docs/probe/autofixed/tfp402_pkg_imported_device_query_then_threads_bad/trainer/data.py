"""A batch of inputs and the product the training step computes."""
import numpy as np
import tensorflow as tf

SIZE = 512


def batch(seed):
    return np.random.default_rng(seed).random((SIZE, SIZE), dtype=np.float32)


def step_total(seed):
    m = tf.constant(batch(seed))
    return float(tf.reduce_sum(tf.matmul(m, m)))
