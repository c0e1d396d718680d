"""The classifier: built and saved once by the entry point, loaded by the workers."""
import os
import tempfile

import tensorflow as tf

MODEL_PATH = os.path.join(tempfile.gettempdir(), "tfp301_pkg_scorer.keras")


def build_and_save():
    model = tf.keras.Sequential(
        [tf.keras.Input((64,)), tf.keras.layers.Dense(256, activation="relu"), tf.keras.layers.Dense(1)]
    )
    model.save(MODEL_PATH)
    return model


def load():
    return tf.keras.models.load_model(MODEL_PATH)
