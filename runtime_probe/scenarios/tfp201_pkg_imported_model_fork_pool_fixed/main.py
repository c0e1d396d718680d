"""The twin of tfp201_pkg_imported_model_fork_pool_bad: the same package, the pool from a spawn context.

The parent still builds the model through `ranker.models`; the workers start fresh interpreters,
import `ranker.workers` themselves, and run their products.
"""
import multiprocessing as mp

from ranker.models import build_ranker
from ranker.workers import expected, score

from runtime_probe.support import report

PROBE = {"rule": "TFP201", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 90}


def main():
    ranker = build_ranker()
    print("ranker parameters:", ranker.count_params())
    seeds = [1, 2]
    with mp.get_context("spawn").Pool(2) as pool:
        totals = pool.map(score, seeds)
    report(totals, [expected(seed) for seed in seeds], rel_tol=1e-3)


if __name__ == "__main__":
    main()
