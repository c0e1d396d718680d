"""Record only: a Session, a Keras model and a tf.function put into manager.list / dict / Queue.

Each of the 9 combinations (and the model again with a spawn-context manager) runs in its own
process group with a 25 s limit; the parent has used each object before (Session run, predict,
tf.function called). Prints what happened and where the exception was raised.
"""
import multiprocessing as mp
import os
import signal
import subprocess
import sys
import time
import traceback

import keras
import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP101", "kind": "bad", "expect": {"outcome": "ok"}, "idle_s": None, "timeout": 420}
LIMIT_S = 25


@tf.function
def total(x):
    return tf.reduce_sum(x)


def make(kind):
    if kind == "session":
        graph = tf.Graph()
        with graph.as_default():
            rows = tf.compat.v1.placeholder(tf.float32, [None, 4], name="rows")
            tf.reduce_sum(rows, name="total")
        sess = tf.compat.v1.Session(graph=graph)
        sess.run("total:0", {"rows:0": np.ones((2, 4))})
        return sess
    if kind == "model":
        model = keras.Sequential([keras.Input((512,)), keras.layers.Dense(512), keras.layers.Dense(1)])
        model.predict(np.ones((2, 512), np.float32), verbose=0)
        return model

    total(tf.ones(3))
    return total


def one(kind, container, method):
    obj = make(kind)
    with mp.get_context(method).Manager() as manager:
        target = getattr(manager, container)()
        start = time.perf_counter()
        try:
            if container == "list":
                target.append(obj)
            elif container == "dict":
                target["obj"] = obj
            else:
                target.put(obj)
            back = target[0] if container == "list" else target["obj"] if container == "dict" else target.get()
            print(f"stored and read back a {type(back).__name__} in {time.perf_counter() - start:.2f} s")
        except Exception as exc:  # noqa: BLE001 - recording what happens
            frame = traceback.extract_tb(exc.__traceback__)[-1]
            print(f"{type(exc).__module__}.{type(exc).__name__}: {str(exc).splitlines()[0][:160]} "
                  f"(raised in the parent at {os.path.basename(frame.filename)}:{frame.lineno} {frame.name})")


def main():
    if len(sys.argv) == 4:
        one(*sys.argv[1:])
        return
    combos = [(k, c, "fork") for k in ("session", "model", "function") for c in ("list", "dict", "Queue")]
    combos.append(("model", "list", "spawn"))
    for kind, container, method in combos:
        proc = subprocess.Popen([sys.executable, __file__, kind, container, method], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True, start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=LIMIT_S)
            line = out.strip().splitlines()[-1] if out.strip() else f"exit code {proc.returncode}, no output"
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            line = f"no reply in {LIMIT_S} s (killed)"
        print(f"{kind:8} manager.{container}() [{method}]: {line}", flush=True)
    report(len(combos), len(combos))


if __name__ == "__main__":
    main()
