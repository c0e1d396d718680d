"""Entry point of a package: imports `serving.registry` (which builds its default Keras model at
import), then a fork pool runs `serving.features.embed` on 512x512 matrices.

Nothing here calls TensorFlow before the pool: the import does. The forked workers inherit the
runtime the model build started, and their products never return.
"""
import multiprocessing as mp

import serving.registry  # noqa: F401 - registers the default model
from serving.features import embed, expected

from runtime_probe.support import report

PROBE = {"rule": "TFP201", "kind": "bad", "expect": {"outcome": "hang"}, "timeout": 40}


def main():
    seeds = [1, 2]
    with mp.get_context("fork").Pool(2) as pool:
        totals = pool.map(embed, seeds)
    report(totals, [expected(seed) for seed in seeds], rel_tol=1e-3)


if __name__ == "__main__":
    main()
