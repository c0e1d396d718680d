"""tf.data.Dataset shards sent to pool workers: pickling fails in the parent."""
import multiprocessing as mp

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {
    "rule": "TFP102",
    "kind": "bad",
    "expect": {
        "outcome": "exception",
        "type": "InvalidArgumentError",
        "match": "Cannot convert a Tensor of dtype variant",
        "where": "parent",
    },
    "timeout": 40,
}


def total(shard):
    return float(sum(tf.reduce_sum(batch) for batch in shard))


def main():
    data = np.random.default_rng(1).random((8, 16), dtype=np.float32)
    dataset = tf.data.Dataset.from_tensor_slices(data).batch(2)
    with mp.Pool(2) as pool:
        totals = pool.map(total, [dataset.shard(2, index) for index in range(2)])
    report(sum(totals), float(data.sum()))


if __name__ == "__main__":
    main()
