"""Entry point of a package: making a `planner.core.Planner` builds its policy network (the
dataclass's `__post_init__` makes a `planner.policy.PolicyNet`, whose constructor builds and calls
a Keras model), then a fork pool runs `planner.rollouts.rollout` (TensorFlow on 512x512 matrices).

Nothing in this file starts TensorFlow's runtime by itself: the constructor two modules away does.
The forked workers inherit a runtime whose thread pools have no threads, and their products never
return.
"""
import multiprocessing as mp

from planner.core import Planner
from planner.rollouts import expected, rollout

from runtime_probe.support import report

PROBE = {"rule": "TFP201", "kind": "bad", "expect": {"outcome": "hang"}, "timeout": 40}


def main():
    planner = Planner()
    print("policy parameters:", planner.policy.model.count_params())
    seeds = list(range(1, planner.horizon + 1))
    with mp.get_context("fork").Pool(2) as pool:
        totals = pool.map(rollout, seeds)
    report(totals, [expected(seed) for seed in seeds], rel_tol=1e-3)


if __name__ == "__main__":
    main()
