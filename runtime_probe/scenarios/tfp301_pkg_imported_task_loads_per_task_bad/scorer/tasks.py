"""The work one pool task does: score one row."""
from scorer.model import load


def score(row):
    model = load()  # the same model again for every row
    return model.predict_on_batch(row[None])[0]
