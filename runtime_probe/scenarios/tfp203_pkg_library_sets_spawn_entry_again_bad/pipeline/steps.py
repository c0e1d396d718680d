"""The steps a pool runs; importing them picks spawn for every later pool."""
import multiprocessing

import tensorflow as tf

multiprocessing.set_start_method("spawn")

SIZE = 256


def total(seed):
    return float(tf.reduce_sum(tf.ones((SIZE, SIZE))) + seed)
