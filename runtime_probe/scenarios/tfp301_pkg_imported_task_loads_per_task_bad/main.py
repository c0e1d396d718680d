"""Entry point of a package: scores rows in a spawn pool with `scorer.tasks.score`, which loads the
Keras model (through `scorer.model.load`) on every task. Each task pays the load; the results are
right, the throughput is a fraction of one model per worker.
"""
import multiprocessing as mp
import time

import numpy as np
from scorer.model import build_and_save
from scorer.tasks import score

from runtime_probe.support import report

PROBE = {
    "rule": "TFP301",
    "kind": "bad",
    "expect": {"outcome": "ok",
               "slower_than": {"scenario": "tfp301_pkg_imported_task_loads_per_task_fixed", "factor": 3}},
    "timeout": 90,
}


def main():
    model = build_and_save()
    data = np.random.default_rng(1).random((32, 64), dtype=np.float32)
    expected = model.predict(data, verbose=0)
    with mp.get_context("spawn").Pool(2) as pool:
        pool.map(score, data[:2])  # warm-up: the workers import TensorFlow
        start = time.perf_counter()
        scores = pool.map(score, data)
        elapsed = time.perf_counter() - start
    report(scores, expected, tasks_per_s=len(data) / elapsed)


if __name__ == "__main__":
    main()
