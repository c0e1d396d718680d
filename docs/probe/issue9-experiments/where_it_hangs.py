"""Record only: where a forked process stops when it receives a Keras model after the parent predicted.

Two cases, each in its own process group: (1) `Manager().list().append(model)` with the default
(fork) manager; (2) `fork Pool.map(partial(score, model), ...)`. The child registers faulthandler on
SIGUSR1 (inherited through fork); after 12 s the case dumps the stuck process's stack and kills
everything. Prints the frames that say where it is: multiprocessing, Keras unpickling, the TF op.
"""
import faulthandler
import multiprocessing as mp
import os
import signal
import subprocess
import sys
import threading
import time
from functools import partial

import keras
import numpy as np

from runtime_probe.support import report

PROBE = {"rule": "TFP102", "kind": "bad", "expect": {"outcome": "ok"}, "idle_s": None, "timeout": 120}
KEEP = ("multiprocessing/", "keras_saveable.py", "saving_lib.py", "random_initializers.py", "gen_stateless_random")


def score(model, seed):
    return float(model.predict(np.random.default_rng(seed).random((512, 512), dtype=np.float32), verbose=0).sum())


def dump_then_kill(pid):
    time.sleep(12)
    os.kill(pid, signal.SIGUSR1)
    time.sleep(2)
    os.killpg(0, signal.SIGKILL)


def case(name):
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    model = keras.Sequential([keras.Input((512,)), keras.layers.Dense(512, activation="relu"), keras.layers.Dense(1)])
    score(model, 0)
    if name == "manager":
        manager = mp.Manager()
        threading.Thread(target=dump_then_kill, args=(manager._process.pid,), daemon=True).start()
        manager.list().append(model)
    else:
        with mp.get_context("fork").Pool(1) as pool:
            threading.Thread(target=dump_then_kill, args=(pool._pool[0].pid,), daemon=True).start()
            pool.map(partial(score, model), [1, 2])
    print("returned (no hang)")


def main():
    if len(sys.argv) == 2:
        case(sys.argv[1])
        return
    for name in ("manager", "pool"):
        done = subprocess.run([sys.executable, __file__, name], capture_output=True, text=True,
                              start_new_session=True, timeout=90, check=False)
        frames = [line.strip() for line in done.stderr.splitlines() if any(k in line for k in KEEP)]
        print(f"--- {name}: exit {done.returncode}; stuck process, innermost first:")
        print("\n".join(f"    {frame}" for frame in frames[:14]) or "    (no dump)")
        print(done.stdout.strip())
    report(True, True)


if __name__ == "__main__":
    main()
