"""The twin of tfp301_pkg_imported_task_loads_per_task_bad, after the manual edit the finding asks
for in `scorer/tasks.py`: each worker loads the model once (`init_worker`, given as the pool's
initializer), and `score` uses it.
"""
import multiprocessing as mp
import time

import numpy as np
from scorer.model import build_and_save
from scorer.tasks import init_worker, score

from runtime_probe.support import report

PROBE = {"rule": "TFP301", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 60}


def main():
    model = build_and_save()
    data = np.random.default_rng(1).random((32, 64), dtype=np.float32)
    expected = model.predict(data, verbose=0)
    with mp.get_context("spawn").Pool(2, initializer=init_worker) as pool:
        pool.map(score, data[:2])  # warm-up: the workers import TensorFlow
        start = time.perf_counter()
        scores = pool.map(score, data)
        elapsed = time.perf_counter() - start
    report(scores, expected, tasks_per_s=len(data) / elapsed)


if __name__ == "__main__":
    main()
