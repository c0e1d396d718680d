"""The twin of tfp103_pkg_imported_object_method_bad, after the manual edit the finding asks for
in `scorer/predictors.py`: a module-level task and an initializer that loads the model once per
worker; only rows cross. Same dispatch (`chunksize=1`).
"""
import multiprocessing as mp
import os
import time

from scorer.model import MODEL_PATH, build_and_save, rows
from scorer.predictors import init_worker, score

from runtime_probe.support import report

PROBE = {"rule": "TFP103", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 120}


def worker_pid(_):
    time.sleep(0.2)
    return os.getpid()


def main():
    model = build_and_save()
    data = rows()
    expected = model.predict(data, verbose=0)
    with mp.get_context("spawn").Pool(2, initializer=init_worker, initargs=(MODEL_PATH,)) as pool:
        while len(set(pool.map(worker_pid, range(2), chunksize=1))) < 2:
            pass  # warm-up: until both workers have imported TF and are ready
        start = time.perf_counter()
        found = pool.map(score, data, chunksize=1)
        elapsed = time.perf_counter() - start
    report(found, expected, rel_tol=1e-3, tasks_per_s=len(data) / elapsed)


if __name__ == "__main__":
    main()
