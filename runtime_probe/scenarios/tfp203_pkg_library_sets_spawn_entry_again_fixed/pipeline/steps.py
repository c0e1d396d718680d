"""The steps a pool runs; importing them picks spawn for every later pool, forced: a spawned child
that imports them again sets the same method without error."""
import multiprocessing

import tensorflow as tf

multiprocessing.set_start_method("spawn", force=True)

SIZE = 256


def total(seed):
    return float(tf.reduce_sum(tf.ones((SIZE, SIZE))) + seed)
