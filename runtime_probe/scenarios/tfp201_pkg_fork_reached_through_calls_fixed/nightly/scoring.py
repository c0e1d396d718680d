"""Scores the night's shards on a pool made from a spawn context: fresh interpreters."""
import multiprocessing as mp

from nightly.tasks import score


def score_all(seeds):
    with mp.get_context("spawn").Pool(2) as pool:
        return pool.map(score, seeds)
