"""Feature transforms, traced with tf.function."""
