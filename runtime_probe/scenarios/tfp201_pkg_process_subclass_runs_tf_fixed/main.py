"""The twin of tfp201_pkg_process_subclass_runs_tf_bad: the same package, the spawn start method.

The parent still runs its warm-up product; the worker processes start fresh interpreters, import
`scoring.workers` themselves, and run their products.
"""
import multiprocessing as mp

from scoring.products import expected, product_sum
from scoring.workers import ScoreWorker

from runtime_probe.support import report

PROBE = {"rule": "TFP201", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 90}


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
    mp.set_start_method("spawn")
    main()
