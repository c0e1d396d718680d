"""A traced `tf.function` sent to `multiprocess.Pool` tasks.

pickle refuses a tf.function by name ("not the same object"); dill goes further and serialises it
by value, down to its traced concrete function, and fails on the FuncGraph in the parent.
"""
import multiprocess
import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {
    "rule": "TFP102",
    "kind": "bad",
    "expect": {"outcome": "exception", "type": "TypeError", "match": "cannot pickle 'FuncGraph' object",
               "where": "parent"},
    "timeout": 40,
}

SIZE = 512


def batch(seed):
    return np.random.default_rng(seed).random((SIZE, SIZE), dtype=np.float32)


@tf.function
def gram_total(rows):
    return tf.reduce_sum(tf.matmul(rows, rows, transpose_b=True))


def score(fn, seed):
    return float(fn(batch(seed)))


def main():
    print("parent", float(gram_total(batch(0))))
    seeds = [1, 2]
    with multiprocess.Pool(2) as pool:
        totals = pool.starmap(score, [(gram_total, seed) for seed in seeds])
    report(totals, [float((batch(seed) @ batch(seed).T).sum()) for seed in seeds], rel_tol=1e-3)


if __name__ == "__main__":
    main()
