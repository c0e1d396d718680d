"""Workers build their own tf.data pipeline from the plain array they receive."""
import multiprocessing as mp

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP102", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 40}


def total(chunk):
    dataset = tf.data.Dataset.from_tensor_slices(chunk).batch(2)
    return float(sum(tf.reduce_sum(batch) for batch in dataset))


def main():
    data = np.random.default_rng(1).random((8, 16), dtype=np.float32)
    with mp.Pool(2) as pool:
        totals = pool.map(total, np.array_split(data, 2))
    report(sum(totals), float(data.sum()))


if __name__ == "__main__":
    main()
