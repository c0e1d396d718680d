"""Ray, Dask and Spark in the driver: a task whose function, arguments or captured globals hold a
TensorFlow object fails to serialise with the engine's own words ("Could not serialize the argument
<...Session...>", "Could not serialize object of type LLGExpr"), which name neither the object nor
the fix. The guard wraps the engines' submission calls and raises the rule's error instead, chained
to the engine's (and of the same built-in type, so `except TypeError:` still catches it).

What is sent: the call's arguments, and a function defined in `__main__` by value with the module
globals and closure cells it reads (cloudpickle, which all three engines use, pickles such a function
by value). The guard reads these only after the engine failed, so a working program pays a wrapper
call per submission and nothing else.

A Dask cluster started while the main module is imported (TFP202) fails in the worker that imports it
again: that error is raised in the driver once Dask's own start fails (alarm.deferred_call), so the guarded
run ends when the program alone would.

It also puts the guard into the engines' workers (engine_workers.py: TFP301 per task or per row):
Ray's through `ray.init`'s runtime_env, Spark's through the Python daemon module.
"""

from __future__ import annotations

import functools
import re
import types

from tfproc_lint.knowledge.engines import ENGINE_FACTS

from . import alarm, engine_sends, engine_workers, errors, objects

SERIALISING = re.compile(r"(?i)serializ|pickl")  # the engines' failure messages (and their causes)

# The engine's own way to keep runtime state in its workers (knowledge/engines.py, shared with the linter).
FIXES = {facts.name: facts.guard_state_fix for facts in ENGINE_FACTS.values()}


def _failure_is_serialisation(exc: BaseException) -> bool:
    seen = 0
    while exc is not None and seen < 8:
        if SERIALISING.search(f"{type(exc).__name__}: {exc}"):
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


def _by_value(function) -> bool:
    """cloudpickle sends a function by value when it cannot be imported by name in the worker."""
    return isinstance(function, types.FunctionType) and function.__module__ in ("__main__", None)


def _functions(obj, depth: int = 0):
    """The by-value functions reachable from what was sent (tuples, partials, closures: Spark wraps
    the user's function in its own closures)."""
    if depth > 6:
        return
    if isinstance(obj, (tuple, list)):
        for item in obj[:objects.MAX_ITEMS]:
            yield from _functions(item, depth + 1)
    elif isinstance(obj, functools.partial):
        yield from _functions(obj.func, depth + 1)
    elif isinstance(obj, types.MethodType):
        yield from _functions(obj.__func__, depth + 1)
    elif isinstance(obj, types.FunctionType):
        if _by_value(obj):
            yield obj
        for cell in obj.__closure__ or ():
            try:
                yield from _functions(cell.cell_contents, depth + 1)
            except ValueError:  # an empty cell
                continue


def _names(code: types.CodeType):
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _names(const)


def captured(function, seen: set | None = None) -> list:
    """What a by-value function takes along: the globals it reads and its closure cells, and the
    same for the by-value functions among them."""
    seen = set() if seen is None else seen
    if id(function) in seen or not _by_value(function):
        return []
    seen.add(id(function))
    values = []
    for name in dict.fromkeys(_names(function.__code__)):
        if name in function.__globals__:
            values.append(function.__globals__[name])
    for cell in function.__closure__ or ():
        try:
            values.append(cell.cell_contents)
        except ValueError:
            continue
    sent = [v for v in values if not isinstance(v, (types.ModuleType, type, types.BuiltinFunctionType))]
    for value in list(sent):
        if isinstance(value, types.FunctionType):
            sent += captured(value, seen)
    return sent


def explain(exc: BaseException, engine: str, route: str, function, payload) -> errors.GuardError | None:
    """The rule's error for a failed submission, or None when no TensorFlow object explains it."""
    if isinstance(exc, errors.GuardError) or not _failure_is_serialisation(exc):
        return None
    found, how = None, ""
    if function is not None and objects.kind(function):
        code, what = objects.kind(function)
        found, how = objects.Found(code, what, ""), "sent as the task's function"
    if found is None and payload is not None:
        found = objects.find(payload)
        how = found.how if found else ""
    if found is None:
        functions = list(_functions(function)) if function is not None else list(_functions(payload))
        state = [value for f in functions for value in captured(f)]
        found = objects.find(state) if state else None
        if found is not None:
            found = objects.Found("TFP103", found.what, "")
            how = f"read from the driver by the function {functions[0].__qualname__}(), which is sent by value"
    if found is None:
        return None
    reason = errors.described(exc, limit=200)
    message = (f"{found.what}{', ' + how if how else ''}, cannot be serialised for {route} ({reason}). "
               f"Fix: {FIXES[engine]} (tfproc-lint {errors.DOCS.format(code=found.code)})")
    cls = errors.crossing_class(found.code, type(exc))
    return cls(f"{found.code}: {message}")


def _wrap(owner, name: str, engine: str, route: str, sent, tasks=None) -> None:
    """Wrap owner.name so that a serialisation failure caused by TensorFlow state raises the rule's
    error; `sent(args, kwargs)` says which (function, payload) the call sends; `tasks(args, kwargs)`, when
    given, how many tasks it sends them with (engine_sends.py counts a model sent with many)."""
    original = getattr(owner, name, None)
    if original is None or getattr(original, "_tfproc_guard", False):
        return

    @functools.wraps(original)
    def guarded(*args, **kwargs):
        if tasks is not None:
            try:
                engine_sends.tasks_sent(engine, *sent(args, kwargs), tasks(args, kwargs))
            except Exception:  # noqa: BLE001 - a check must never break the program
                pass
        try:
            return original(*args, **kwargs)
        except Exception as exc:
            try:
                error = explain(exc, engine, route, *sent(args, kwargs))
            except Exception:  # noqa: BLE001 - never replace the engine's error with one of ours
                error = None
            if error is None:
                raise
            raise error from exc

    guarded._tfproc_guard = True
    setattr(owner, name, guarded)


def _ray_call(args, kwargs):
    """RemoteFunction/ActorClass/ActorMethod._remote(self, args=None, kwargs=None, ...)."""
    call_args = kwargs.get("args", args[1] if len(args) > 1 else None)
    call_kwargs = kwargs.get("kwargs", args[2] if len(args) > 2 else None)
    return getattr(args[0], "_function", None), (call_args or (), call_kwargs or {})


def _one_task(args, kwargs) -> int:
    return 1


def patch_ray(ray) -> None:
    import ray.actor
    import ray.remote_function

    route = "a Ray task or actor call (.remote(), pickled in the driver)"
    _wrap(ray.remote_function.RemoteFunction, "_remote", "ray", route, _ray_call, _one_task)
    _wrap(ray.actor.ActorClass, "_remote", "ray", "a Ray actor's constructor (.remote())", _ray_call)
    _wrap(ray.actor.ActorMethod, "_remote", "ray", "a Ray actor method call (.remote())", _ray_call, _one_task)
    _wrap(ray, "put", "ray", "ray.put (the object store)", lambda a, k: (None, (a[:1], {})))
    _remember_puts(ray)
    if not getattr(ray.init, "_tfproc_guard", False):
        ray.init = _ray_init(ray.init)


def _remember_puts(ray) -> None:
    """After `ray.put`, tell engine_sends.py which ref holds a Keras model."""
    original = ray.put
    if getattr(original, "_tfproc_puts", False):
        return

    @functools.wraps(original)
    def put(*args, **kwargs):
        ref = original(*args, **kwargs)
        try:
            engine_sends.object_put(args[0] if args else kwargs.get("value"), ref)
        except Exception:  # noqa: BLE001 - a check must never break the program
            pass
        return ref

    put._tfproc_guard = put._tfproc_puts = True
    ray.put = put


WORKER_SETUP = "tfproc_lint.guard.setup_engine_worker"


def _ray_init(original):
    """Ray's workers are not children of the driver: give them the guard through the job's
    runtime_env (`worker_process_setup_hook`), unless the program set a hook of its own."""

    @functools.wraps(original)
    def init(*args, **kwargs):
        runtime_env = kwargs.get("runtime_env")
        if runtime_env is None or (isinstance(runtime_env, dict) and "worker_process_setup_hook" not in runtime_env):
            env_vars = {**(runtime_env or {}).get("env_vars", {}),
                        engine_workers.REPORT_ENV: engine_workers.driver_report()}
            kwargs["runtime_env"] = {**(runtime_env or {}), "worker_process_setup_hook": WORKER_SETUP,
                                     "env_vars": env_vars}
        return original(*args, **kwargs)

    init._tfproc_guard = True
    return init


def patch_dask(distributed) -> None:
    client = distributed.Client
    # A cluster started while the main module is imported fails in the spawned worker that imports it
    # again (TFP202) and then, by itself, in the driver ("Nanny failed to start"): the worker's error is
    # raised then, chained to Dask's, not in the middle of the start (alarm.deferred_call).
    for cls in (client, getattr(distributed, "SpecCluster", None)):
        if cls is not None and not getattr(cls.__init__, "_tfproc_guard", False):
            cls.__init__ = _deferring(cls.__init__)
    _wrap(client, "submit", "dask", "a Dask task (Client.submit, pickled in the driver)",
          lambda a, k: (a[1] if len(a) > 1 else k.get("func"), (a[2:], k)), _one_task)
    _wrap(client, "map", "dask", "Dask tasks (Client.map, pickled in the driver)",
          lambda a, k: (a[1] if len(a) > 1 else k.get("func"), (a[2:], k)), engine_sends.map_tasks)
    _wrap(client, "scatter", "dask", "Client.scatter",
          lambda a, k: (None, (a[1:2] or (k.get("data"),), {})))


def _deferring(original):
    @functools.wraps(original)
    def call(*args, **kwargs):
        return alarm.deferred_call(original, *args, **kwargs)

    call._tfproc_guard = True
    return call


def patch_dask_keras(module) -> None:
    """Dask serialises a Keras model (a task's argument or its result) with a serializer of its own that
    Keras 3 models fail (`AttributeError: '_updated_config'`); in a worker the error reaches the
    driver only as that AttributeError. Name the rule where it happens."""
    import keras

    original = module.serialize_keras_model
    if getattr(original, "_tfproc_guard", False):
        return

    @functools.wraps(original)
    def serialize_keras_model(model):
        try:
            return original(model)
        except Exception as exc:
            code, what = objects.kind(model) or ("TFP102", f"a Keras model ({type(model).__qualname__})")
            cls = errors.crossing_class(code, type(exc))
            raise cls(f"{code}: {what} cannot be serialised by Dask's Keras serializer (a task's argument or "
                      f"the result a task returns; {type(exc).__name__}: {exc}). Fix: return or send plain data "
                      "(model.get_weights(), or a saved model's file path) and rebuild the model where it is "
                      f"used (tfproc-lint {errors.DOCS.format(code=code)})") from exc

    serialize_keras_model._tfproc_guard = True
    module.dask_serialize.register(keras.Model)(serialize_keras_model)
    module.serialize_keras_model = serialize_keras_model


def patch_spark(pyspark) -> None:
    import pyspark.broadcast
    import pyspark.serializers

    _wrap(pyspark.serializers.CloudPickleSerializer, "dumps", "spark",
          "a Spark task (its function and what that reads, pickled in the driver)",
          lambda a, k: (a[1] if len(a) > 1 else None, None))
    _wrap(pyspark.broadcast.Broadcast, "dump", "spark", "sc.broadcast",
          lambda a, k: (None, (a[1:2], {})))
    engine_workers.driver_report()
    context = pyspark.SparkContext
    if not getattr(context._initialize_context, "_tfproc_guard", False):
        context._initialize_context = _spark_context(context._initialize_context)


SPARK_DAEMON = "tfproc_lint.guard.spark_daemon"


def _spark_context(original):
    """Spark's Python workers are forked by a daemon the JVM starts: make it the guard's daemon
    (`spark.python.daemon.module`), unless the program chose one."""

    @functools.wraps(original)
    def initialize(self, jconf):
        try:
            jconf.setIfMissing("spark.python.daemon.module", SPARK_DAEMON)
        except Exception:  # noqa: BLE001 - never stop a SparkContext for the guard's sake
            pass
        return original(self, jconf)

    initialize._tfproc_guard = True
    return initialize
