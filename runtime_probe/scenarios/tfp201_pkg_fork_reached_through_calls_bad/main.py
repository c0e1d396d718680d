"""Entry point of a package: builds and runs a Keras model, then calls `nightly.scoring.score_all`,
whose fork pool runs `nightly.tasks.score` (TensorFlow on 512x512 matrices).

Nothing in `nightly/scoring.py` starts TensorFlow's runtime, and nothing in this file forks: the
runtime started here reaches the pool through the call. The forked workers inherit a runtime whose
thread pools have no threads, and their products never return. The finding is at the pool, in
`nightly/scoring.py`, naming the model built here.
"""
import keras
import numpy as np

from nightly.scoring import score_all
from nightly.tasks import expected

from runtime_probe.support import report

PROBE = {"rule": "TFP201", "kind": "bad", "expect": {"outcome": "hang"}, "timeout": 40,
         "lint": ["nightly/scoring.py"]}


def main():
    model = keras.Sequential([keras.Input((16,)), keras.layers.Dense(4)])
    print("warm-up:", model.predict(np.zeros((1, 16), dtype=np.float32), verbose=0).shape)
    seeds = [1, 2]
    totals = score_all(seeds)
    report(totals, [expected(seed) for seed in seeds], rel_tol=1e-3)


if __name__ == "__main__":
    main()
