"""`Pool()` of spawned workers, one per CPU, each loading the Keras model in its initializer:
measures every worker's resident memory once it holds the model (psutil), and reports the
largest with the number of workers. The figure TFP302 quotes comes from the benchmark; this
measures it again."""
import multiprocessing as mp
import os
import tempfile

import numpy as np
import psutil
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"quick": True, "rule": "TFP302", "kind": "bad", "expect": {"outcome": "ok"}, "timeout": 150, "max_cpus": 8}

MODEL_PATH = os.path.join(tempfile.gettempdir(), "tfp302_cpu_count_pool.keras")
model = None


def load_model(ready):
    global model
    model = tf.keras.models.load_model(MODEL_PATH)
    model.predict_on_batch(np.zeros((1, 64), np.float32))  # the model runs: its memory is in use
    ready.put(os.getpid())


def predict_chunk(rows):
    return model.predict_on_batch(rows)


def main():
    trained = tf.keras.Sequential(
        [tf.keras.Input((64,)), tf.keras.layers.Dense(256, activation="relu"), tf.keras.layers.Dense(1)]
    )
    trained.save(MODEL_PATH)
    rows = np.random.default_rng(1).random((256, 64), dtype=np.float32)
    expected = trained.predict(rows, verbose=0)

    ctx = mp.get_context("spawn")
    ready = ctx.Queue()
    with ctx.Pool(initializer=load_model, initargs=(ready,)) as pool:
        workers = [ready.get(timeout=120) for _ in range(getattr(os, "process_cpu_count", os.cpu_count)() or 1)]
        rss = [psutil.Process(pid).memory_info().rss / 2**20 for pid in workers]
        scores = np.concatenate(pool.map(predict_chunk, np.array_split(rows, 8)))
    report(scores, expected, workers=len(workers), worker_rss_mib=max(rss), total_rss_mib=sum(rss))


if __name__ == "__main__":
    main()
