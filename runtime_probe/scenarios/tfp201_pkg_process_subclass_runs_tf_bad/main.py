"""Entry point of a package: the parent runs an op (a warm-up product), then starts two
`scoring.workers.ScoreWorker` processes (a `multiprocessing.Process` subclass of another module)
under the default start method, fork on Linux before Python 3.14.

Nothing in this file says that the children run TensorFlow: the subclass's `run()` does, through
`scoring.products`. The forked children inherit a runtime whose thread pools have no threads, and
their products never return.
"""
import multiprocessing as mp

from scoring.products import expected, product_sum
from scoring.workers import ScoreWorker

from runtime_probe.support import report

PROBE = {"rule": "TFP201", "kind": "bad", "expect": {"outcome": "hang"}, "timeout": 40}


def main():
    print("warm-up:", product_sum(0) > 0)
    seeds = [1, 2]
    results = mp.Queue()
    workers = [ScoreWorker(seed, results) for seed in seeds]
    for worker in workers:
        worker.start()
    totals = dict(results.get() for _ in seeds)
    for worker in workers:
        worker.join()
    report([totals[seed] for seed in seeds], [expected(seed) for seed in seeds], rel_tol=1e-3)


if __name__ == "__main__":
    main()
