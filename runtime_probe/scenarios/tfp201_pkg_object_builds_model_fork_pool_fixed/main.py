"""The twin of tfp201_pkg_object_builds_model_fork_pool_bad: the same package, the pool from a spawn
context.

The parent still makes the planner (and so builds its policy network through `planner.policy`); the
workers start fresh interpreters, import `planner.rollouts` themselves, and run their products.
"""
import multiprocessing as mp

from planner.core import Planner
from planner.rollouts import expected, rollout

from runtime_probe.support import report

PROBE = {"rule": "TFP201", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 90}


def main():
    planner = Planner()
    print("policy parameters:", planner.policy.model.count_params())
    seeds = list(range(1, planner.horizon + 1))
    with mp.get_context("spawn").Pool(2) as pool:
        totals = pool.map(rollout, seeds)
    report(totals, [expected(seed) for seed in seeds], rel_tol=1e-3)


if __name__ == "__main__":
    main()
