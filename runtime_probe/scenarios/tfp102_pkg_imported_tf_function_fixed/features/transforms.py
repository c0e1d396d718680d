"""The traced transform, and the plain function pool tasks call: it traces in the worker."""
import tensorflow as tf


@tf.function
def gram(batch):
    return tf.matmul(batch, batch, transpose_b=True)


def gram_array(batch):
    return gram(batch).numpy()
