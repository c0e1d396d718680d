"""A Keras model passed to `joblib.Parallel(n_jobs=2)` tasks (default loky backend): works.

The near miss of TFP102's pool case. loky workers are fresh interpreters (no fork hazard), the model
pickles (Keras 3), and joblib sends tasks in auto-sized batches pickled as one object, so the model
is serialised once per batch, not once per task. Measured next to a twin that loads the model once
per worker: comparable tasks/s (see docs/probe/issue9-measurements.md).
"""
import time

import keras
import numpy as np
from joblib import Parallel, delayed

from runtime_probe.support import report

PROBE = {"rule": "TFP102", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 120}


def predict(model, row):
    return model.predict_on_batch(row[None])[0]


def main():
    model = keras.Sequential(
        [keras.Input((64,)), keras.layers.Dense(256, activation="relu"), keras.layers.Dense(1)]
    )
    data = np.random.default_rng(1).random((160, 64), dtype=np.float32)
    expected = model.predict(data, verbose=0)
    with Parallel(n_jobs=2) as parallel:
        parallel(delayed(predict)(model, row) for row in data[:32])  # warm-up: workers import TF
        start = time.perf_counter()
        scores = parallel(delayed(predict)(model, row) for row in data)
        elapsed = time.perf_counter() - start
    report(scores, expected, rel_tol=1e-3, tasks_per_s=len(data) / elapsed)


if __name__ == "__main__":
    main()
