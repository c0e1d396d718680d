"""Ray: one `ray.put` of a Keras model, its ObjectRef passed to many tasks.

It works, but Ray stores the pickled model once and every task unpickles it again, and a Keras 3
model unpickles by loading the whole saved model: each task holds its own copy (measured: 24
tasks, 24 copies over 2 workers). The fixed twin builds the model once per actor.
"""
import os
import time

import numpy as np
import ray
import tensorflow as tf

from runtime_probe.support import report, start_ray

PROBE = {
    "rule": "TFP102",
    "kind": "bad",
    "requires": ["ray"],
    "expect": {"outcome": "ok", "slower_than": {"scenario": "tfp102_ray_put_model_fixed", "factor": 2}},
    "timeout": 300,
}

TASKS = 24


@ray.remote
def predict(model, rows):
    return os.getpid(), id(model), model.predict_on_batch(rows)


def main():
    model = tf.keras.Sequential([tf.keras.Input((64,)), tf.keras.layers.Dense(20000, activation="relu"),
                                 tf.keras.layers.Dense(1)])  # 1.3 million weights, 5 MB
    data = np.random.default_rng(1).random((TASKS * 2, 64), dtype=np.float32)
    batches = np.array_split(data, TASKS)
    start_ray()
    try:
        ref = ray.put(model)
        ray.get([predict.remote(ref, b) for b in batches[:2]])  # warm-up: the workers import TensorFlow
        start = time.perf_counter()
        results = ray.get([predict.remote(ref, b) for b in batches])  # each task unpickles the model
        elapsed = time.perf_counter() - start
    finally:
        ray.shutdown()
    copies = len({(pid, model_id) for pid, model_id, _ in results})
    scores = np.concatenate([scores for _, _, scores in results])
    report(scores, model.predict(data, verbose=0), rel_tol=1e-3, tasks_per_s=TASKS / elapsed, tasks=TASKS,
           model_copies=copies)


if __name__ == "__main__":
    main()
