"""The twin of tfp201_pkg_import_builds_model_fork_pool_bad: the same imports, the pool from a spawn
context: each worker starts a fresh interpreter (which imports the registry again, building its
own model) and runs `serving.features.embed`.
"""
import multiprocessing as mp

import serving.registry  # noqa: F401 - registers the default model
from serving.features import embed, expected

from runtime_probe.support import report

PROBE = {"rule": "TFP201", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 90}


def main():
    seeds = [1, 2]
    with mp.get_context("spawn").Pool(2) as pool:
        totals = pool.map(embed, seeds)
    report(totals, [expected(seed) for seed in seeds], rel_tol=1e-3)


if __name__ == "__main__":
    main()
