"""A long-lived worker process: its run() scores its seed through scoring.products."""
import multiprocessing as mp

from scoring.products import product_sum


class ScoreWorker(mp.Process):
    def __init__(self, seed, results):
        super().__init__()
        self.seed = seed
        self.results = results

    def run(self):
        self.results.put((self.seed, product_sum(self.seed)))
