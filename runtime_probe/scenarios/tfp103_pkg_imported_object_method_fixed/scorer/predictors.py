"""Scoring rows in pool workers: each worker loads the model once (`init_worker`)."""
import keras

_model = None


def init_worker(path):
    global _model
    _model = keras.models.load_model(path)


def score(row):
    return _model(row[None]).numpy()[0]
