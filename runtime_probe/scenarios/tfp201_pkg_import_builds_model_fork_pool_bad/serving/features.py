"""The feature the pool computes: a 512x512 product through TensorFlow."""
import numpy as np
import tensorflow as tf

SIZE = 512


def rows(seed):
    return np.random.default_rng(seed).random((SIZE, SIZE), dtype=np.float32)


def embed(seed):
    m = tf.constant(rows(seed))
    return float(tf.reduce_sum(tf.matmul(m, m)))


def expected(seed):
    m = rows(seed)
    return float((m @ m).sum())
