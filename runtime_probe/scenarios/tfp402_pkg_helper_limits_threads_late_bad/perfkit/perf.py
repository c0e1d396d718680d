"""Process tuning: one intra-op thread, for a machine shared with other services."""
import tensorflow as tf


def limit_threads():
    tf.config.threading.set_intra_op_parallelism_threads(1)
