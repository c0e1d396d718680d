"""A Keras model passed to `joblib.Parallel(n_jobs=2)` tasks (default loky backend).

It works: loky workers are fresh interpreters (no fork hazard) and a Keras 3 model pickles. But the
model (1 MB here) is serialised into every batch of tasks joblib sends and rebuilt by the worker;
joblib's adaptive batching grows batches only while they finish quickly, and rebuilding the model
keeps them slow. Compare tfp102_joblib_keras_model_fixed, which loads the model once per worker.
"""
import os
import time

import keras
import numpy as np
from joblib import Parallel, delayed

from runtime_probe.support import report

PROBE = {
    "rule": "TFP102",
    "kind": "bad",
    "expect": {"outcome": "ok", "slower_than": {"scenario": "tfp102_joblib_keras_model_fixed", "factor": 2}},
    "timeout": 150,
}

SIZE = 512


def predict(model, row):
    return model.predict_on_batch(row[None])[0]


def worker_pid(_):
    time.sleep(0.2)
    return os.getpid()


def main():
    model = keras.Sequential(
        [keras.Input((SIZE,)), keras.layers.Dense(SIZE, activation="relu"), keras.layers.Dense(1)]
    )
    data = np.random.default_rng(1).random((96, SIZE), dtype=np.float32)
    expected = model.predict(data, verbose=0)
    with Parallel(n_jobs=2) as parallel:
        while len(set(parallel(delayed(worker_pid)(i) for i in range(2)))) < 2:
            pass  # warm-up: until both workers have imported TF and are ready
        start = time.perf_counter()
        scores = parallel(delayed(predict)(model, row) for row in data)
        elapsed = time.perf_counter() - start
    report(scores, expected, rel_tol=1e-3, tasks_per_s=len(data) / elapsed)


if __name__ == "__main__":
    main()
