"""Dask: a @dask.delayed task builds a Keras model and returns it to the client.

Dask moves task results with its own serializers, and the Keras serializer it still registers
raises AttributeError ('_updated_config') under Keras 3 (the error the program ends with); the
client's `compute` also reports `TypeError: Could not serialize object of type Sequential`.
"""
import dask
import numpy as np
import tensorflow as tf
from dask.distributed import Client, LocalCluster

from runtime_probe.support import report

PROBE = {
    "rule": "TFP102",
    "kind": "bad",
    "requires": ["dask", "distributed"],
    "expect": {"outcome": "exception", "type": "AttributeError", "match": "_updated_config", "where": "parent"},
    "timeout": 300,
}


@dask.delayed
def fitted(width):
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(width), tf.keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    x = np.ones((16, 4), np.float32)
    model.fit(x, x.sum(axis=1), epochs=1, verbose=0)
    return model


def main():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster):
        models = dask.compute(*[fitted(width) for width in (4, 8)])
        report([m.count_params() for m in models], [4 * 4 + 4 + 4 + 1, 4 * 8 + 8 + 8 + 1])


if __name__ == "__main__":
    main()
