"""The task the pool runs: a 512x512 product, large enough to go through TensorFlow's thread pools."""
import numpy as np
import tensorflow as tf

SIZE = 512


def batch(seed):
    return np.random.default_rng(seed).random((SIZE, SIZE), dtype=np.float32)


def rollout(seed):
    m = tf.constant(batch(seed))
    return float(tf.reduce_sum(tf.matmul(m, m)))


def expected(seed):
    m = batch(seed)
    return float((m @ m).sum())
