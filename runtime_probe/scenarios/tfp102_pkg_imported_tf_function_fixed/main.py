"""The twin of tfp102_pkg_imported_tf_function_bad: the pool maps `features.transforms.gram_array`,
a plain function of the other module that calls the tf.function in the worker; only arrays cross.
"""
import multiprocessing as mp

import numpy as np
from features.transforms import gram_array

from runtime_probe.support import report

PROBE = {"rule": "TFP102", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 60}


def main():
    batches = [np.random.default_rng(seed).random((8, 8), dtype=np.float32) for seed in range(4)]
    with mp.get_context("spawn").Pool(2) as pool:
        found = pool.map(gram_array, batches)
    report(found, [b @ b.T for b in batches], rel_tol=1e-4)


if __name__ == "__main__":
    main()
