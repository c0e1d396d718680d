"""joblib (loky) workers load the Keras model once each, from a file, into a module global.

The twin of tfp102_joblib_keras_model_bad: joblib has no `initializer=`, so the task loads the
model lazily on its worker's first call; afterwards tasks carry only a row.
"""
import os
import tempfile
import time

import keras
import numpy as np
from joblib import Parallel, delayed

from runtime_probe.support import report

PROBE = {"rule": "TFP102", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 150}

SIZE = 512
MODEL_PATH = os.path.join(tempfile.gettempdir(), "joblib_scorer.keras")
_model = None


def predict(row):
    global _model
    if _model is None:
        _model = keras.models.load_model(MODEL_PATH)
    return _model.predict_on_batch(row[None])[0]


def worker_pid(_):
    predict(np.zeros(SIZE, dtype=np.float32))  # load the model now, not while timed
    time.sleep(0.2)
    return os.getpid()


def main():
    model = keras.Sequential(
        [keras.Input((SIZE,)), keras.layers.Dense(SIZE, activation="relu"), keras.layers.Dense(1)]
    )
    model.save(MODEL_PATH)
    data = np.random.default_rng(1).random((96, SIZE), dtype=np.float32)
    expected = model.predict(data, verbose=0)
    with Parallel(n_jobs=2) as parallel:
        while len(set(parallel(delayed(worker_pid)(i) for i in range(2)))) < 2:
            pass  # warm-up: until both workers have imported TF and loaded the model
        start = time.perf_counter()
        scores = parallel(delayed(predict)(row) for row in data)
        elapsed = time.perf_counter() - start
    report(scores, expected, rel_tol=1e-3, tasks_per_s=len(data) / elapsed)


if __name__ == "__main__":
    main()
