"""Dask: the same task returns the trained weights (numpy arrays); the client rebuilds the model."""
import dask
import numpy as np
import tensorflow as tf
from dask.distributed import Client, LocalCluster

from runtime_probe.support import report

PROBE = {"rule": "TFP102", "kind": "fixed", "requires": ["dask", "distributed"], "expect": {"outcome": "ok"},
         "timeout": 300}


def build(width):
    return tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(width), tf.keras.layers.Dense(1)])


@dask.delayed
def fitted_weights(width):
    model = build(width)
    model.compile(optimizer="adam", loss="mse")
    x = np.ones((16, 4), np.float32)
    model.fit(x, x.sum(axis=1), epochs=1, verbose=0)
    return model.get_weights()


def main():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster):
        weights = dask.compute(*[fitted_weights(width) for width in (4, 8)])
    models = []
    for width, arrays in zip((4, 8), weights):
        model = build(width)
        model.set_weights(arrays)
        models.append(model)
    report([m.count_params() for m in models], [4 * 4 + 4 + 4 + 1, 4 * 8 + 8 + 8 + 1])


if __name__ == "__main__":
    main()
