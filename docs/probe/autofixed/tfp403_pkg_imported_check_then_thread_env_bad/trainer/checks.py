"""Input checks, run before the work: a TensorFlow op."""
import tensorflow as tf


def check_input():
    print("input max", float(tf.reduce_max(tf.ones((4, 4)))))
