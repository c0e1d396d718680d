"""Ray: the model's weights go to two actors, each of which builds the model once in __init__;
the tasks are method calls (measured: 24 tasks, 2 model copies)."""
import os
import time

import numpy as np
import ray
import tensorflow as tf

from runtime_probe.support import report, start_ray

PROBE = {"rule": "TFP102", "kind": "fixed", "requires": ["ray"], "expect": {"outcome": "ok"}, "timeout": 300}

TASKS = 24


def build():
    return tf.keras.Sequential([tf.keras.Input((64,)), tf.keras.layers.Dense(20000, activation="relu"),
                                tf.keras.layers.Dense(1)])  # 1.3 million weights, 5 MB


@ray.remote
class Predictor:
    def __init__(self, weights):
        self.model = build()
        self.model.set_weights(weights)

    def predict(self, rows):
        return os.getpid(), id(self.model), self.model.predict_on_batch(rows)


def main():
    model = build()
    data = np.random.default_rng(1).random((TASKS * 2, 64), dtype=np.float32)
    batches = np.array_split(data, TASKS)
    start_ray()
    try:
        weights = ray.put(model.get_weights())
        actors = [Predictor.remote(weights) for _ in range(2)]
        ray.get([actor.predict.remote(batches[0]) for actor in actors])  # warm-up: import and build
        start = time.perf_counter()
        results = ray.get([actors[i % 2].predict.remote(b) for i, b in enumerate(batches)])
        elapsed = time.perf_counter() - start
    finally:
        ray.shutdown()
    copies = len({(pid, model_id) for pid, model_id, _ in results})
    scores = np.concatenate([scores for _, _, scores in results])
    report(scores, model.predict(data, verbose=0), rel_tol=1e-3, tasks_per_s=TASKS / elapsed, tasks=TASKS,
           model_copies=copies)


if __name__ == "__main__":
    main()
