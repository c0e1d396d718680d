"""Entry point of a package: maps `features.transforms.gram`, a tf.function defined in the other
module, over batches in a spawn pool. Pickling the task fails in the parent: the decorated name is
a tf.function object, not the function pickle can find by its name
(`PicklingError: Can't pickle <function gram>: it's not the same object as features.transforms.gram`).
"""
import multiprocessing as mp

import numpy as np
from features.transforms import gram

from runtime_probe.support import report

PROBE = {
    "rule": "TFP102",
    "kind": "bad",
    "expect": {"outcome": "exception", "type": "PicklingError", "match": "Can't pickle", "where": "parent"},
    "timeout": 60,
}


def main():
    batches = [np.random.default_rng(seed).random((8, 8), dtype=np.float32) for seed in range(4)]
    with mp.get_context("spawn").Pool(2) as pool:
        found = pool.map(gram, batches)
    report([np.asarray(f) for f in found], [b @ b.T for b in batches], rel_tol=1e-4)


if __name__ == "__main__":
    main()
