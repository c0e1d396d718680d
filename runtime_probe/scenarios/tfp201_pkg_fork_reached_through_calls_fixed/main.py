"""The twin of tfp201_pkg_fork_reached_through_calls_bad: the same entry point, the library's pool
from a spawn context.

The parent still builds and runs the model before calling `nightly.scoring.score_all`; the workers
start fresh interpreters, import `nightly.tasks` themselves, and run their products.
"""
import keras
import numpy as np

from nightly.scoring import score_all
from nightly.tasks import expected

from runtime_probe.support import report

PROBE = {"rule": "TFP201", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 90,
         "lint": ["nightly/scoring.py"]}


def main():
    model = keras.Sequential([keras.Input((16,)), keras.layers.Dense(4)])
    print("warm-up:", model.predict(np.zeros((1, 16), dtype=np.float32), verbose=0).shape)
    seeds = [1, 2]
    totals = score_all(seeds)
    report(totals, [expected(seed) for seed in seeds], rel_tol=1e-3)


if __name__ == "__main__":
    main()
