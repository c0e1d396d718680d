"""The work one pool task does: score one row with the model its worker loaded once."""
from scorer.model import load

_model = None


def init_worker():
    global _model
    _model = load()


def score(row):
    return _model.predict_on_batch(row[None])[0]
