"""TFP102/103 per task in the driver of Ray and Dask: the same Keras model (or a bound method or closure
holding one) sent with task after task. It works, but the engine pickles the whole model into every task
(`client.map(model.predict, chunks)`, `client.submit(f, model, x)`, `f.remote(model, x)`), and each worker
unpickles a fresh copy per task (measured: 32 tasks of a 21 MB model, 2 tasks/s against 11 when the
workers load it once; runtime_probe/scenarios/tfp103_dask_bound_predict_*).

Counted where engines.py wraps the submission calls, before the engine pickles anything: a task's
function and arguments are searched (objects.find, bounded) only once TensorFlow or Keras is imported.
A Ray actor's constructor is not counted (one copy per actor is the fix), nor is a Ray task's function
(Ray exports it once, not per task), nor what a function reads from the driver's globals.
"""

from __future__ import annotations

import sys

from tfproc_lint.knowledge.engines import ENGINE_FACTS

from . import costs, objects

REPEATS = 3  # as for pools (costs.py): one or two sends can be a deliberate hand-off
MAX_TRACKED = 256
# The engines whose sends are counted (Ray, Dask), their nouns and fixes (knowledge/engines.py).
FIXES = {facts.name: facts.guard_model_send_fix for facts in ENGINE_FACTS.values() if facts.guard_model_send_fix}
ENGINES = {name: ENGINE_FACTS[name].noun for name in FIXES}
_sent: dict = {}  # id of the TensorFlow object (or a put ref's hex) -> tasks it was sent with
_put: dict[str, str] = {}  # hex of a Ray ObjectRef that holds a Keras model -> what it holds


def object_put(value, ref) -> None:
    """`ray.put(value)` returned `ref`: remember a ref that holds a Keras model (each task given the
    ref unpickles its own copy of the model: measured, runtime_probe/scenarios/tfp102_ray_put_model_*)."""
    if not ("keras" in sys.modules or "tensorflow" in sys.modules) or not hasattr(ref, "hex"):
        return
    found = objects.find(value)
    if found is None or found.obj is None or found.code != "TFP102":
        return
    if len(_put) >= MAX_TRACKED:
        _put.clear()
    _put[ref.hex()] = found.what


def _put_refs(payload):
    """The remembered ObjectRefs among a call's arguments (top level: Ray resolves only those)."""
    args, kwargs = payload
    for value in (*args, *kwargs.values()):
        hexed = getattr(value, "hex", None)
        if callable(hexed):
            try:
                key = hexed()
            except Exception:  # noqa: BLE001 - not a Ray ref after all
                continue
            if isinstance(key, str) and key in _put:
                yield key, _put[key]


def tasks_sent(engine: str, function, payload, tasks: int = 1) -> None:
    """`tasks` tasks of `engine` are about to be sent with `function` and `payload` (args, kwargs)."""
    if tasks < 1 or not ("keras" in sys.modules or "tensorflow" in sys.modules):
        return
    if engine == "ray":
        function = None  # Ray exports a task's function once; only the arguments travel with every call
        for key, what in _put_refs(payload):
            count = _sent[key] = _sent.get(key, 0) + tasks
            if count >= REPEATS:
                costs.warn("TFP102", (
                    f"{what}, put in Ray's object store with ray.put, is handed to {count} tasks so far: Ray stores "
                    "it once, but each task unpickles its own copy, a full model load per task, so the tasks are "
                    "slow (the program goes on)"), fix=FIXES[engine])
    found = objects.find((function, payload))
    if found is None or found.obj is None or found.code == "TFP101":  # sessions and graphs do not pickle at all
        return
    if len(_sent) >= MAX_TRACKED:
        _sent.clear()
    count = _sent[id(found.obj)] = _sent.get(id(found.obj), 0) + tasks
    if count < REPEATS:
        return
    how = ", held by the bound method or closure sent as the task's function," if found.code == "TFP103" else ""
    costs.warn(found.code, (
        f"{found.what}{how} is pickled into every {ENGINES[engine]} task it is sent with, {count} tasks so far: "
        "each task serialises the whole model in the driver and its worker unpickles a fresh copy, so the "
        "tasks are slow (the program goes on)"), fix=FIXES[engine])


def map_tasks(args: tuple, kwargs: dict) -> int:
    """Client.map(func, *iterables): as many tasks as the first iterable has items (1 when it has no len)."""
    iterables = args[2:] if len(args) > 2 else ()
    try:
        return len(iterables[0]) if iterables else 1
    except TypeError:
        return 1
