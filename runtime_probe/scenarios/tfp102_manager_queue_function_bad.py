"""A `tf.function` put on a `Manager().Queue()` as a job for workers.

The proxy pickles the job in the parent; a tf.function is pickled by reference to its name and is
not the object found there, so `put` raises `PicklingError` in the parent.
"""
import multiprocessing as mp

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {
    "rule": "TFP102",
    "kind": "bad",
    "expect": {"outcome": "exception", "type": "PicklingError", "match": "not the same object", "where": "parent"},
    "timeout": 40,
}

SIZE = 512


def batch(seed):
    return np.random.default_rng(seed).random((SIZE, SIZE), dtype=np.float32)


@tf.function
def gram_total(rows):
    return tf.reduce_sum(tf.matmul(rows, rows, transpose_b=True))


def run_jobs(jobs, count):
    results = []
    for _ in range(count):
        fn, seed = jobs.get()
        results.append(float(fn(batch(seed))))
    return results


def main():
    print("parent", float(gram_total(batch(0))))
    seeds = [1, 2]
    with mp.Manager() as manager:
        jobs = manager.Queue()
        for seed in seeds:
            jobs.put((gram_total, seed))
        with mp.get_context("spawn").Pool(1) as pool:
            totals = pool.apply(run_jobs, (jobs, len(seeds)))
    report(totals, [float((batch(seed) @ batch(seed).T).sum()) for seed in seeds], rel_tol=1e-3)


if __name__ == "__main__":
    main()
