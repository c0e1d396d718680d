"""Entry point of a package: scores rows in a spawn pool with the bound method of a
`scorer.predictors.Predictor`, whose constructor (in the other module) loads the Keras model.

Pickling a bound method pickles its object: every task ships the whole model (1 MB) and the
worker rebuilds it. Tasks go one per message (`chunksize=1`). Compare the fixed twin (tasks/s).
"""
import multiprocessing as mp
import os
import time

from scorer.model import MODEL_PATH, build_and_save, rows
from scorer.predictors import Predictor

from runtime_probe.support import report

PROBE = {
    "rule": "TFP103",
    "kind": "bad",
    "expect": {"outcome": "ok", "slower_than": {"scenario": "tfp103_pkg_imported_object_method_fixed", "factor": 3}},
    "timeout": 120,
}


def worker_pid(_):
    time.sleep(0.2)
    return os.getpid()


def main():
    model = build_and_save()
    data = rows()
    expected = model.predict(data, verbose=0)
    predictor = Predictor(MODEL_PATH)
    with mp.get_context("spawn").Pool(2) as pool:
        while len(set(pool.map(worker_pid, range(2), chunksize=1))) < 2:
            pass  # warm-up: until both workers have imported TF and are ready
        start = time.perf_counter()
        found = pool.map(predictor.score, data, chunksize=1)
        elapsed = time.perf_counter() - start
    report(found, expected, rel_tol=1e-3, tasks_per_s=len(data) / elapsed)


if __name__ == "__main__":
    main()
