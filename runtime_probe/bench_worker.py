"""One benchmark run: one workload served by one pattern, measured in this process and its workers.

Started by `runtime_probe.benchmark` with the arguments `prepare DIR` (writes the models once) or
`run WORKLOAD PATTERN DIR MIN_TIME` (prints one result line), through `python -c` so that the
functions sent to workers pickle as `runtime_probe.bench_worker.*`. TensorFlow is imported
at the top, as user code does: spawned workers pay for the import, and the fork pattern relies on
the parent having imported TensorFlow without initialising it.
"""

from __future__ import annotations

import itertools
import json
import multiprocessing as mp
import os
import queue
import sys
import threading
import time
from multiprocessing.pool import ThreadPool
from pathlib import Path

import numpy as np
import psutil
import tensorflow as tf

from runtime_probe.benchmark import BATCH, RESULT_PREFIX

FEATURES, HIDDEN, LAYERS = 64, 256, 4  # one task = inference on one row of 64 floats
WORKERS = 2
MAX_ROUND = 512


# The model: numpy weights, and the three TensorFlow forms built from them.

def make_weights(seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    sizes = [FEATURES] + [HIDDEN] * LAYERS + [1]
    return [
        (rng.normal(0, n_in ** -0.5, (n_in, n_out)).astype(np.float32), rng.normal(0, 0.1, n_out).astype(np.float32))
        for n_in, n_out in itertools.pairwise(sizes)
    ]


def reference(weights, rows: np.ndarray) -> np.ndarray:
    hidden = rows
    for index, (w, b) in enumerate(weights):
        hidden = hidden @ w + b
        if index < len(weights) - 1:
            hidden = np.maximum(hidden, 0)
    return hidden


def load_weights(data_dir: Path):
    arrays = np.load(data_dir / "weights.npz")
    return [(arrays[f"w{i}"], arrays[f"b{i}"]) for i in range(len(arrays.files) // 2)]


class Scorer(tf.Module):
    """The SavedModel form."""

    def __init__(self, weights):
        super().__init__()
        self.layers = [(tf.Variable(w), tf.Variable(b)) for w, b in weights]

    @tf.function(input_signature=[tf.TensorSpec([None, FEATURES], tf.float32)])
    def __call__(self, rows):
        hidden = rows
        for index, (w, b) in enumerate(self.layers):
            hidden = tf.matmul(hidden, w) + b
            if index < len(self.layers) - 1:
                hidden = tf.nn.relu(hidden)
        return hidden


def prepare(data_dir: Path) -> None:
    weights = make_weights()
    np.savez(data_dir / "weights.npz", **{f"{k}{i}": a for i, pair in enumerate(weights) for k, a in zip("wb", pair)})
    layers = [tf.keras.layers.Dense(HIDDEN, activation="relu") for _ in range(LAYERS)]
    model = tf.keras.Sequential([tf.keras.Input((FEATURES,)), *layers, tf.keras.layers.Dense(1)])
    model.set_weights([array for pair in weights for array in pair])
    model.save(data_dir / "model.keras")
    tf.saved_model.save(Scorer(weights), str(data_dir / "savedmodel"))


def build(workload: str, data_dir: Path):
    """The TensorFlow state a worker needs: the part whose cost the patterns differ in."""
    if workload == "graph":
        graph = tf.Graph()
        with graph.as_default():
            hidden = tf.compat.v1.placeholder(tf.float32, [None, FEATURES], name="rows")
            weights = load_weights(data_dir)
            for index, (w, b) in enumerate(weights):
                hidden = tf.matmul(hidden, w) + b
                if index < len(weights) - 1:
                    hidden = tf.nn.relu(hidden)
            tf.identity(hidden, name="scores")
        return tf.compat.v1.Session(graph=graph)
    if workload == "keras":
        return tf.keras.models.load_model(data_dir / "model.keras")
    return tf.saved_model.load(str(data_dir / "savedmodel"))


def infer(workload: str, state, rows: np.ndarray) -> np.ndarray:
    if workload == "graph":
        return state.run("scores:0", {"rows:0": rows})
    if workload == "keras":
        return state.predict_on_batch(rows)
    return state(rows).numpy()


# Pool workers and the server process.

_job: dict = {}


def init_worker(workload: str, data_dir: Path, ready, per_task: bool) -> None:
    _job.update(workload=workload, data_dir=data_dir, state=None if per_task else build(workload, data_dir))
    ready.put((os.getpid(), time.monotonic()))


def task(row: np.ndarray) -> np.ndarray:
    state = _job["state"]
    if state is None:  # the per-task pattern
        state = build(_job["workload"], _job["data_dir"])
    return infer(_job["workload"], state, row[None])[0]


def chunk_task(rows: np.ndarray) -> np.ndarray:
    """The chunked pattern: one task is BATCH rows, one model call."""
    return infer(_job["workload"], _job["state"], rows)


def serve(workload: str, data_dir: Path, requests, replies, batch_max: int) -> None:
    state = build(workload, data_dir)
    replies.put((os.getpid(), time.monotonic()))
    while True:
        batch = [requests.get()]
        while batch[-1] is not None and len(batch) < batch_max:
            try:
                batch.append(requests.get_nowait())
            except queue.Empty:
                break
        stop = batch[-1] is None
        batch = [item for item in batch if item is not None]
        if batch:
            ids, rows = zip(*batch)
            replies.put(list(zip(ids, infer(workload, state, np.stack(rows)))))
        if stop:
            return


# Measurement.

class PeakRss(threading.Thread):
    """Samples the resident set size of this process and of the workers it is told about."""

    def __init__(self):
        super().__init__(daemon=True)
        self.roles = {os.getpid(): "parent"}
        self.peak: dict[int, int] = {}
        self.done = threading.Event()

    def watch(self, pid: int) -> None:
        self.roles[pid] = "worker"

    def run(self) -> None:
        while not self.done.wait(0.05):
            for pid in list(self.roles):
                try:
                    self.peak[pid] = max(self.peak.get(pid, 0), psutil.Process(pid).memory_info().rss)
                except psutil.Error:
                    pass

    def result(self) -> dict:
        self.done.set()
        mib = {pid: rss / 2**20 for pid, rss in self.peak.items()}
        workers = [mib[pid] for pid, role in self.roles.items() if role == "worker" and pid in mib]
        return {"parent": round(mib.get(os.getpid(), 0)), "worker": round(max(workers)) if workers else None}


def steady_throughput(serve_rows, data: np.ndarray, expected: np.ndarray, min_time: float) -> tuple[float, int, bool]:
    """Tasks/s over rounds of growing size until `min_time` is spent; after one warm-up round."""
    serve_rows(data[: 2 * WORKERS])
    done, elapsed, size, valid = 0, 0.0, 8, True
    while elapsed < min_time:
        start = time.perf_counter()
        out = np.asarray(serve_rows(data[:size])).reshape(size, -1)
        elapsed += time.perf_counter() - start
        valid = valid and np.allclose(out, expected[:size], rtol=1e-3, atol=1e-4)
        done += size
        size = min(2 * size, MAX_ROUND)
    return done / elapsed, done, valid


def measure(workload: str, pattern: str, data_dir: Path, min_time: float) -> dict:
    data = np.random.default_rng(1).random((MAX_ROUND, FEATURES), dtype=np.float32)
    expected = reference(load_weights(data_dir), data)
    rss = PeakRss()
    rss.start()
    if pattern in ("per-task", "init-spawn", "init-forkserver", "init-fork", "chunked"):
        measure_with = _pool
    elif pattern.startswith("server"):
        measure_with = _server
    else:
        measure_with = _in_process
    startup, (rate, done, valid) = measure_with(
        workload, pattern, data_dir, lambda serve_rows: steady_throughput(serve_rows, data, expected, min_time), rss
    )
    return {
        "workload": workload,
        "pattern": pattern,
        "tasks_per_s": rate,
        "tasks": done,
        "startup_s": startup,
        "peak_rss_mib": rss.result(),
        "valid": bool(valid),
    }


def _pool(workload, pattern, data_dir, steady, rss):
    start = time.monotonic()
    method = {"init-forkserver": "forkserver", "init-fork": "fork"}.get(pattern, "spawn")
    ctx = mp.get_context(method)
    if method == "forkserver":
        ctx.set_forkserver_preload([__name__])  # this module imports TensorFlow, runs no op
    ready = ctx.Queue()
    initargs = (workload, data_dir, ready, pattern == "per-task")
    with ctx.Pool(WORKERS, initializer=init_worker, initargs=initargs) as pool:
        startup = _wait_ready(ready, WORKERS, start, rss)
        if pattern == "chunked":  # rows/s, as for the other patterns; one task = BATCH rows
            warm_up = [np.zeros((BATCH, FEATURES), np.float32)] * (2 * WORKERS)
            pool.map(chunk_task, warm_up, chunksize=1)  # every worker's first model call
            return startup, steady(lambda rows: np.concatenate(pool.map(chunk_task, _chunks(rows), chunksize=1)))
        return startup, steady(lambda rows: pool.map(task, rows))


def _chunks(rows: np.ndarray) -> list[np.ndarray]:
    return [rows[i:i + BATCH] for i in range(0, len(rows), BATCH)]


def _server(workload, pattern, data_dir, steady, rss):
    start = time.monotonic()
    ctx = mp.get_context("spawn")
    requests, replies = ctx.Queue(), ctx.Queue()
    batch_max = BATCH if pattern == "server-batched" else 1
    server = ctx.Process(target=serve, args=(workload, data_dir, requests, replies, batch_max))
    server.start()
    startup = _wait_ready(replies, 1, start, rss)

    def round_trip(rows):
        for item in enumerate(rows):
            requests.put(item)
        answers: dict = {}
        while len(answers) < len(rows):
            answers.update(replies.get())
        return [answers[i] for i in range(len(rows))]

    measured = steady(round_trip)
    requests.put(None)
    server.join()
    return startup, measured


def _in_process(workload, pattern, data_dir, steady, rss):
    start = time.monotonic()
    state = build(workload, data_dir)
    startup = time.monotonic() - start

    def one(row):
        return infer(workload, state, row[None])[0]

    def batched(rows):
        return np.concatenate([infer(workload, state, rows[i:i + BATCH]) for i in range(0, len(rows), BATCH)])

    if pattern == "threads":
        with ThreadPool(WORKERS) as threads:
            return startup, steady(lambda rows: threads.map(one, rows))
    if pattern == "sequential":
        return startup, steady(lambda rows: [one(row) for row in rows])
    return startup, steady(batched)


def _wait_ready(ready, count: int, start: float, rss: PeakRss) -> float:
    """Seconds from `start` until `count` workers reported ready (state built)."""
    last = start
    for _ in range(count):
        pid, at = ready.get()
        rss.watch(pid)
        last = max(last, at)
    return last - start


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[0] == "prepare":
        prepare(Path(argv[1]))
        return
    _, workload, pattern, data_dir, min_time = argv
    result = measure(workload, pattern, Path(data_dir), float(min_time))
    print(RESULT_PREFIX + json.dumps(result), flush=True)
