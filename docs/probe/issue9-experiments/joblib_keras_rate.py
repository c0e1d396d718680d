"""Record only: joblib (loky) tasks/s with a Keras model sent in every task vs loaded once per worker.

Same pool (2 loky workers, reused), same 160 single-row predictions, each pattern warmed up first.
"""
import os
import tempfile
import time

import keras
import numpy as np
from joblib import Parallel, delayed

from runtime_probe.support import report

PROBE = {"rule": "TFP102", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 180}

MODEL_PATH = os.path.join(tempfile.gettempdir(), "joblib_rate.keras")
_model = None


def predict_with(model, row):
    return model.predict_on_batch(row[None])[0]


def predict_loaded(row):
    global _model
    if _model is None:
        _model = keras.models.load_model(MODEL_PATH)
    return _model.predict_on_batch(row[None])[0]


def rate(parallel, calls):
    start = time.perf_counter()
    out = parallel(calls)
    return out, len(out) / (time.perf_counter() - start)


def main():
    model = keras.Sequential([keras.Input((64,)), keras.layers.Dense(256, activation="relu"), keras.layers.Dense(1)])
    model.save(MODEL_PATH)
    data = np.random.default_rng(1).random((160, 64), dtype=np.float32)
    expected = model.predict(data, verbose=0)
    with Parallel(n_jobs=2) as parallel:
        parallel(delayed(predict_with)(model, row) for row in data[:32])
        sent, sent_rate = rate(parallel, (delayed(predict_with)(model, row) for row in data))
        parallel(delayed(predict_loaded)(row) for row in data[:32])
        loaded, loaded_rate = rate(parallel, (delayed(predict_loaded)(row) for row in data))
    print(f"model in every task: {sent_rate:.0f} tasks/s; loaded once per worker: {loaded_rate:.0f} tasks/s")
    report([sent, loaded], [expected, expected], rel_tol=1e-3, sent=sent_rate, loaded=loaded_rate)


if __name__ == "__main__":
    main()
