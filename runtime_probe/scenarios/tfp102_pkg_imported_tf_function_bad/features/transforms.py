"""The traced transform the pipeline applies to each batch."""
import tensorflow as tf


@tf.function
def gram(batch):
    return tf.matmul(batch, batch, transpose_b=True)
