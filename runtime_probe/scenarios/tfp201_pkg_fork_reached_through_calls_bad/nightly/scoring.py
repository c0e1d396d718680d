"""Scores the night's shards on a fork pool."""
import multiprocessing as mp

from nightly.tasks import score


def score_all(seeds):
    with mp.get_context("fork").Pool(2) as pool:
        return pool.map(score, seeds)
