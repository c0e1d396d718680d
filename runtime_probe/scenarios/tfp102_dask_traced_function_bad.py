"""Dask: a tf.function that the driver has called (traced) submitted as a task.

Dask pickles the task with cloudpickle in the driver: `TypeError: Could not serialize object`.
"""
import tensorflow as tf
from dask.distributed import Client, LocalCluster

from runtime_probe.support import report

PROBE = {
    "rule": "TFP102",
    "kind": "bad",
    "requires": ["dask", "distributed"],
    "expect": {"outcome": "exception", "type": "TypeError", "match": "Could not serialize object",
               "where": "parent"},
    "timeout": 300,
}


@tf.function
def double(x):
    return x * 2.0


def main():
    print("driver", float(double(tf.constant(1.0))))  # traces it
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        futures = [client.submit(double, float(x)) for x in range(4)]
        report([float(f.result()) for f in futures], [2.0 * x for x in range(4)])


if __name__ == "__main__":
    main()
