"""Models known to the service, built when the module is first imported."""
import keras

SIZE = 512

DEFAULT_MODEL = keras.Sequential([keras.Input((SIZE,)), keras.layers.Dense(SIZE), keras.layers.Dense(1)])
