"""Workers call the module-level tf.function themselves; tasks carry only data."""
import multiprocessing as mp

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP102", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 40}


@tf.function
def normalize(row):
    return row / tf.reduce_sum(row)


def apply(row):
    return normalize(row).numpy()


def main():
    data = np.random.default_rng(1).random((4, 16), dtype=np.float32)
    with mp.Pool(2) as pool:
        results = pool.map(apply, data)
    report(results, data / data.sum(axis=1, keepdims=True))


if __name__ == "__main__":
    main()
