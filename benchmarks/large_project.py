"""A synthetic project package of several hundred modules, for issue 36's speed budget.

`write_large_project(folder)` writes the same files on every run (one fixed seed): a pyproject.toml,
a package `atlas` with sub-packages that look like a real ML project's, and a few entry scripts:

    atlas/utils/       plain numpy and standard-library helpers, most of the modules, no TensorFlow;
                       each calls helpers of other utility modules, some pairs import each other
    atlas/chains/      helpers that call helpers in other modules, chains 3 to 5 deep; the last link
                       runs TensorFlow in some chains and only numpy in the others
    atlas/models/      model modules: functions that build Keras models, classes whose constructor
                       builds and calls one, factories that return them, lazy holders
    atlas/workers/     pool tasks that go through a chain, Process subclasses, functions that start a
                       pool of them
    atlas/settings/    tf.config and os.environ helpers
    train_*.py         entry scripts: they start the runtime through calls into the package, then make
                       settings and start workers through calls (cross-module work for the project
                       layer: callers, constructors, settings), and near misses (spawn, the setting first)
    tools/             one-file scripts that build a model and fork a pool in the same file (found
                       file-local too); half of the worker modules also run TensorFlow themselves

Nothing here imports the package: it is text that the linter reads.
"""

from __future__ import annotations

import random
from pathlib import Path

SEED = 36  # issue 36; the same files on every run
UTILITY_MODULES = 260
CHAINS = 16  # each 3 to 5 modules deep
MODEL_MODULES = 24
WORKER_MODULES = 20
SETTINGS_MODULES = 4
PACKAGE = "atlas"


def _utility_module(index: int, rng: random.Random) -> str:
    others = sorted({rng.randrange(UTILITY_MODULES) for _ in range(3)} - {index})
    imports = "".join(f"from {PACKAGE}.utils import u{other:03d}\n" for other in others)
    # Every tenth module imports its neighbour inside a function and the neighbour imports it back.
    partner = index + 1 if index % 10 == 0 else index - 1 if index % 10 == 1 else None
    cycle = (f"from {PACKAGE}.utils import u{partner:03d}\n" if partner is not None and partner < UTILITY_MODULES
             else "")
    calls = "\n".join(f"    total = total + u{other:03d}.scale(values, {rng.randint(1, 9)}).sum()" for other in others)
    return f'''"""Utilities {index}: numpy helpers for batches and statistics."""
import json
import os

import numpy as np

{imports}{cycle}
WINDOW = {rng.randint(4, 64)}


def scale(values, factor):
    return np.asarray(values, dtype=np.float32) * factor


def normalise(values):
    array = np.asarray(values, dtype=np.float32)
    return (array - array.mean()) / (array.std() + 1e-6)


def windowed(values, width=WINDOW):
    array = np.asarray(values)
    return [array[start:start + width] for start in range(0, len(array), width)]


def summary(values):
    total = 0.0
{calls or "    total = float(np.sum(values))"}
    return {{"total": float(total), "windows": len(windowed(values))}}


def save(values, folder):
    with open(os.path.join(folder, "u{index:03d}.json"), "w") as handle:
        json.dump(summary(values), handle)


class RunningMean:
    def __init__(self):
        self.count = 0
        self.mean = 0.0

    def add(self, value):
        self.count += 1
        self.mean += (float(value) - self.mean) / self.count
        return self.mean
'''


def _chain_module(chain: int, link: int, depth: int, runs_tf: bool) -> str:
    last = link == depth - 1
    if not last:
        return f'''"""Chain {chain}, link {link}: passes the batch on to the next link."""
from {PACKAGE}.chains.c{chain:02d}_{link + 1} import step_{link + 1}
from {PACKAGE}.utils.u{(chain * 7 + link) % UTILITY_MODULES:03d} import normalise


def step_{link}(batch):
    return step_{link + 1}(normalise(batch))
'''
    if runs_tf:
        return f'''"""Chain {chain}, last link: scores the batch with TensorFlow."""
import tensorflow as tf


def step_{link}(batch):
    tensor = tf.convert_to_tensor(batch)
    return float(tf.reduce_sum(tf.matmul(tensor[None], tensor[:, None])))
'''
    return f'''"""Chain {chain}, last link: scores the batch with numpy only."""
import numpy as np


def step_{link}(batch):
    array = np.asarray(batch, dtype=np.float32)
    return float(array @ array)
'''


def _chain_depth(chain: int) -> int:
    return 3 + chain % 3


def _chain_runs_tf(chain: int) -> bool:
    return chain % 2 == 0


def _model_module(index: int, rng: random.Random) -> str:
    width, units = rng.choice((8, 16, 32)), rng.choice((2, 4, 8))
    helper = rng.randrange(UTILITY_MODULES)
    return f'''"""Model {index}: builders, a network object and its factory."""
import keras
import tensorflow as tf

from {PACKAGE}.utils.u{helper:03d} import normalise

WIDTH = {width}


def build_model(width=WIDTH):
    return keras.Sequential([keras.Input((width,)), keras.layers.Dense({units})])


def warm_model(width=WIDTH):
    model = build_model(width)
    model(tf.zeros((1, width)))
    return model


class Net{index}:
    """Builds and calls its model when made, so that its weights exist."""

    def __init__(self, width=WIDTH):
        self.width = width
        self.model = warm_model(width)

    def predict(self, batch):
        return self.model(tf.convert_to_tensor(normalise(batch))[None])


class LazyNet{index}:
    """Keeps only how to make the model: it is built on first use."""

    def __init__(self, width=WIDTH):
        self.width = width
        self.model = None

    def predict(self, batch):
        if self.model is None:
            self.model = warm_model(self.width)
        return self.model(tf.convert_to_tensor(batch)[None])


def make_net(width=WIDTH):
    return Net{index}(width)
'''


def _worker_module(index: int) -> str:
    chain = index % CHAINS
    # Half of the worker modules also run TensorFlow themselves (a task of their own, which the
    # entry scripts do not call): each file alone names both TensorFlow and processes.
    own_task = '''

def local_task(seed):
    noise = tf.random.stateless_normal((64, 64), seed=(seed, 0))
    return float(tf.reduce_sum(tf.matmul(noise, noise)))


def score_locally(seeds):
    with mp.get_context("spawn").Pool(2) as pool:
        return pool.map(local_task, seeds)
''' if index % 2 else ""
    tensorflow = "\nimport tensorflow as tf\n" if own_task else ""
    return f'''"""Workers {index}: pool tasks and processes that score batches through chain {chain}."""
import multiprocessing as mp
{tensorflow}
from {PACKAGE}.chains.c{chain:02d}_0 import step_0
from {PACKAGE}.utils.u{(index * 13) % UTILITY_MODULES:03d} import scale


def task(seed):
    return step_0(scale([seed, seed + 1, seed + 2], 0.5))
{own_task}

def score_all(seeds):
    with mp.Pool(2) as pool:
        return pool.map(task, seeds)


def score_all_spawned(seeds):
    with mp.get_context("spawn").Pool(2) as pool:
        return pool.map(task, seeds)


class Scorer{index}(mp.Process):
    def __init__(self, seed):
        super().__init__()
        self.seed = seed

    def run(self):
        print(task(self.seed))


def start_scorers(seeds):
    processes = [Scorer{index}(seed) for seed in seeds]
    for process in processes:
        process.start()
    for process in processes:
        process.join()
'''


def _settings_module(index: int) -> str:
    return f'''"""Settings {index}: what the runtime reads once, made by helpers."""
import os

import tensorflow as tf


def limit_threads(count=1):
    tf.config.threading.set_intra_op_parallelism_threads(count)
    tf.config.threading.set_inter_op_parallelism_threads(count)


def quiet_logs():
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"


def grow_memory():
    for gpu in tf.config.list_physical_devices("GPU"):
        tf.config.experimental.set_memory_growth(gpu, True)


def configure():
    quiet_logs()
    limit_threads()
'''


def _entry_scripts() -> dict[str, str]:
    """Entry scripts: the runtime started through the package, then settings and workers."""
    scripts = {}
    for number in range(6):
        model, worker, settings = number * 3 % MODEL_MODULES, number * 5 % WORKER_MODULES, number % SETTINGS_MODULES
        scripts[f"train_{number}.py"] = f'''"""Training job {number}: network, settings, workers: through calls."""
from {PACKAGE}.models import m{model:02d}
from {PACKAGE}.settings import s{settings} as settings
from {PACKAGE}.workers import w{worker:02d} as workers


def main():
    net = m{model:02d}.make_net()
    settings.limit_threads()
    print(workers.score_all(range(8)))
    workers.start_scorers(range(2))
    return net


if __name__ == "__main__":
    main()
'''
    scripts["train_spawn.py"] = f'''"""Near miss: the network first, then spawn workers (fresh interpreters)."""
import multiprocessing

from {PACKAGE}.models.m01 import Net1
from {PACKAGE}.workers import w02 as workers

if __name__ == "__main__":
    multiprocessing.set_start_method("spawn")
    net = Net1()
    print(workers.score_all_spawned(range(8)), net)
'''
    scripts["train_settings_first.py"] = f'''"""Near miss: the settings first on every path, then a lazy network."""
from {PACKAGE}.models.m03 import LazyNet3
from {PACKAGE}.settings import s1 as settings
from {PACKAGE}.workers import w01 as workers

if __name__ == "__main__":
    settings.configure()
    net = LazyNet3()
    print(workers.score_all(range(8)), net)
'''
    for number in range(4):
        # One-file tools, as projects keep beside the package: the model and the workers in the same file.
        scripts[f"tools/export_{number}.py"] = f'''"""Export tool {number}: the model, then a pool."""
import multiprocessing

import keras
import numpy as np
import tensorflow as tf


def shard_score(seed):
    return float(tf.reduce_sum(tf.random.stateless_normal((32, 32), seed=(seed, {number}))))


if __name__ == "__main__":
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(2)])
    print(model(np.zeros((1, 8), dtype=np.float32)))
    with multiprocessing.Pool(2) as pool:
        print(pool.map(shard_score, range(4)))
'''
    return scripts


def project_files() -> dict[str, str]:
    """Every file of the project by its relative path; the same on every call."""
    rng = random.Random(SEED)
    files = {"pyproject.toml": f'[project]\nname = "{PACKAGE}"\nversion = "0.1"\n'}
    for folder in ("", "utils", "chains", "models", "workers", "settings"):
        files[f"{PACKAGE}/{folder}/__init__.py".replace("//", "/")] = ""
    for index in range(UTILITY_MODULES):
        files[f"{PACKAGE}/utils/u{index:03d}.py"] = _utility_module(index, rng)
    for chain in range(CHAINS):
        depth = _chain_depth(chain)
        for link in range(depth):
            files[f"{PACKAGE}/chains/c{chain:02d}_{link}.py"] = _chain_module(chain, link, depth, _chain_runs_tf(chain))
    for index in range(MODEL_MODULES):
        files[f"{PACKAGE}/models/m{index:02d}.py"] = _model_module(index, rng)
    for index in range(WORKER_MODULES):
        files[f"{PACKAGE}/workers/w{index:02d}.py"] = _worker_module(index)
    for index in range(SETTINGS_MODULES):
        files[f"{PACKAGE}/settings/s{index}.py"] = _settings_module(index)
    files.update(_entry_scripts())
    return files


def write_large_project(folder: Path) -> Path:
    """Write the project under folder/large_project and return that directory."""
    root = folder / "large_project"
    for relative, text in project_files().items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


if __name__ == "__main__":
    import sys

    target = write_large_project(Path(sys.argv[1] if len(sys.argv) > 1 else "."))
    print(f"{len(project_files())} files in {target}")
