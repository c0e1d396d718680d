"""An augmentation the pool runs: brightness jitter on a 512x512 image, then its mean."""
import tensorflow as tf

SIZE = 512


def jitter(seed):
    image = tf.random.stateless_uniform((SIZE, SIZE, 3), seed=(seed, 0))
    return float(tf.reduce_mean(tf.clip_by_value(image * 0.5 + 0.25, 0.0, 1.0)))
