"""Entry point of a package: a helper in `ranker.models` builds the Keras model in the parent, then a
fork pool runs `ranker.workers.score` (TensorFlow on 512x512 matrices).

Nothing in this file starts TensorFlow's runtime by itself: building the model in the other module
does (its weights are initialised by eager ops). The forked workers inherit a runtime whose thread
pools have no threads, and their products never return.
"""
import multiprocessing as mp

from ranker.models import build_ranker
from ranker.workers import expected, score

from runtime_probe.support import report

PROBE = {"rule": "TFP201", "kind": "bad", "expect": {"outcome": "hang"}, "timeout": 40}


def main():
    ranker = build_ranker()
    print("ranker parameters:", ranker.count_params())
    seeds = [1, 2]
    with mp.get_context("fork").Pool(2) as pool:
        totals = pool.map(score, seeds)
    report(totals, [expected(seed) for seed in seeds], rel_tol=1e-3)


if __name__ == "__main__":
    main()
