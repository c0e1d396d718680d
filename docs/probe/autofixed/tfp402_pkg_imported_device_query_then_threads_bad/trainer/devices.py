"""What the trainer runs on: the logical devices, for the log."""
import tensorflow as tf


def describe_devices():
    return [device.name for device in tf.config.list_logical_devices()]
