"""An object that scores rows with the model it loads when made."""
import keras


class Predictor:
    def __init__(self, path):
        self.model = keras.models.load_model(path)

    def score(self, row):
        return self.model(row[None]).numpy()[0]
