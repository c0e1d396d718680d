"""The policy network: built and called once when the object is made, so its weights exist."""
import keras
import numpy as np

SIZE = 512


class PolicyNet:
    def __init__(self):
        self.model = keras.Sequential([keras.Input((SIZE,)), keras.layers.Dense(SIZE, activation="relu"),
                                       keras.layers.Dense(1)])
        self.model(np.zeros((1, SIZE), dtype=np.float32))
