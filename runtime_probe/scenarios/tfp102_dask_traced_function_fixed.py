"""Dask: a plain task function that makes its tf.function in the worker."""
import tensorflow as tf
from dask.distributed import Client, LocalCluster

from runtime_probe.support import report

PROBE = {"rule": "TFP102", "kind": "fixed", "requires": ["dask", "distributed"], "expect": {"outcome": "ok"},
         "timeout": 300}


def double(x):
    return float(tf.function(lambda v: v * 2.0)(tf.constant(x)))


def main():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        futures = [client.submit(double, float(x)) for x in range(4)]
        report([f.result() for f in futures], [2.0 * x for x in range(4)])


if __name__ == "__main__":
    main()
