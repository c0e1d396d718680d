"""The guard's engine wrappers (tfproc_lint/guard/engines.py) without the engines: a submission call
that fails to serialise is given the rule's error when TensorFlow state explains the failure, and is
left alone otherwise. The probe runs the real Ray, Dask and Spark scenarios under the guard."""

from __future__ import annotations

import pickle
import types

import pytest

from tfproc_lint.guard import engines, errors


def tf_class(name: str, module: str):
    return type(name, (), {"__module__": module})


Session = tf_class("BaseSession", "tensorflow.python.client.session")
Function = tf_class("Function", "tensorflow.python.eager.polymorphic_function.polymorphic_function")


def main_function(source: str, name: str, **globals_):
    """A function as if defined in __main__ (what cloudpickle sends by value), reading `globals_`."""
    namespace = {"__name__": "__main__", **globals_}
    exec(source, namespace)
    return namespace[name]


class FakeEngine:
    """Stands in for RemoteFunction/Client: fails as the engines do, on anything it cannot pickle."""

    def __init__(self, function=None):
        self._function = function

    def _remote(self, args=None, kwargs=None):
        for value in (*args, *kwargs.values(), *engines.captured(self._function)):
            if isinstance(value, (Session, Function)):
                raise TypeError(f"Could not serialize the argument {value!r} for a task or actor")
        return "ok"


def patched(function=None):
    class Engine(FakeEngine):
        pass

    engines._wrap(Engine, "_remote", "ray", "a Ray task", engines._ray_call)
    return Engine(function)


def test_a_session_argument_names_tfp101_and_keeps_the_engines_error_as_cause():
    task = patched(main_function("def total(s):\n    return 1\n", "total"))
    with pytest.raises(TypeError) as caught:
        task._remote(args=(Session(),), kwargs={})
    assert isinstance(caught.value, errors.CrossingError) and caught.value.code == "TFP101"
    assert str(caught.value).startswith("TFP101: a tf.compat.v1.Session")
    assert "ray.remote actor" in str(caught.value) and "Could not serialize" in str(caught.value)
    assert isinstance(caught.value.__cause__, TypeError)


def test_a_traced_function_argument_names_tfp102():
    task = patched(main_function("def apply(f):\n    return 1\n", "apply"))
    with pytest.raises(errors.CrossingError) as caught:
        task._remote(args=(Function(),), kwargs={})
    assert caught.value.code == "TFP102"


def test_state_read_from_the_driver_by_the_function_names_tfp103():
    apply = main_function("def apply(x):\n    return MODEL(x)\n", "apply", MODEL=Function())
    with pytest.raises(errors.CrossingError) as caught:
        patched(apply)._remote(args=(1.0,), kwargs={})
    assert caught.value.code == "TFP103" and "apply()" in str(caught.value)


def test_other_failures_and_working_calls_are_untouched():
    assert patched(main_function("def f(x):\n    return x\n", "f"))._remote(args=(1,), kwargs={}) == "ok"

    class Wrong(FakeEngine):
        def _remote(self, args=None, kwargs=None):
            raise TypeError("missing a required argument: 'x'")  # not a serialisation failure

    engines._wrap(Wrong, "_remote", "ray", "a Ray task", engines._ray_call)
    with pytest.raises(TypeError) as caught:
        Wrong(None)._remote(args=(Session(),), kwargs={})
    assert not isinstance(caught.value, errors.GuardError)

    class NoTensorFlow(FakeEngine):
        def _remote(self, args=None, kwargs=None):
            raise TypeError("cannot pickle '_thread.lock' object")

    engines._wrap(NoTensorFlow, "_remote", "ray", "a Ray task", engines._ray_call)
    with pytest.raises(TypeError) as caught:
        NoTensorFlow(None)._remote(args=(1,), kwargs={})
    assert not isinstance(caught.value, errors.GuardError)


def test_spark_finds_the_users_function_inside_its_own_closures():
    sess = Session()
    totals = main_function("def totals(rows):\n    return SESS.run(rows)\n", "totals", SESS=sess)

    def wrapper(split, iterator):  # what RDD.mapPartitions sends: a closure around the user's function
        return totals(iterator)

    command = (wrapper, None, "deserializer", "serializer")
    error = engines.explain(pickle.PicklingError("Could not serialize object: TypeError: cannot pickle 'Graph'"),
                            "spark", "a Spark task", command, None)
    assert isinstance(error, pickle.PicklingError) and error.code == "TFP103"
    assert "totals()" in str(error) and "mapPartitions" in str(error)


def test_functions_imported_from_modules_are_not_sent_by_value():
    assert engines.captured(types.FunctionType((lambda: 0).__code__, {"__name__": "pkg.mod"})) == []


# --- TFP301 inside engine workers (engine_workers.py) ----------------------------------------------
from tfproc_lint.guard import engine_workers  # noqa: E402


@pytest.fixture
def fresh_counts(monkeypatch):
    monkeypatch.setattr(engine_workers, "_tasks_of", {})
    monkeypatch.setattr(engine_workers, "_in_task", {})


def run_in(monkeypatch, engine: str, task) -> None:
    monkeypatch.setattr(engine_workers, "current_task", lambda: (engine, task))


MODEL = ("file", "/models/m.keras", 1)


def test_outside_engine_tasks_builds_are_not_counted_here(fresh_counts):
    assert engine_workers.built(MODEL, "the model") == (False, None, None)


def test_ray_and_dask_warn_when_tasks_of_one_worker_build_the_same_model(fresh_counts, monkeypatch):
    for task in ("t1", "t2"):
        run_in(monkeypatch, "dask", task)
        assert engine_workers.built(MODEL, "the model") == (True, None, None)
    run_in(monkeypatch, "dask", "t2")  # the same task again: still two tasks
    assert engine_workers.built(MODEL, "the model")[1] is None
    run_in(monkeypatch, "dask", "t3")
    counted, message, fix = engine_workers.built(MODEL, "the model")
    assert counted and "in 3 Dask tasks" in message and "WorkerPlugin" in fix


def test_spark_counts_within_one_task_so_one_load_per_partition_is_quiet(fresh_counts, monkeypatch):
    for partition in range(5):  # an iterator UDF: one load per task, the Python worker reused
        run_in(monkeypatch, "spark", partition)
        assert engine_workers.built(MODEL, "the model")[1] is None
    run_in(monkeypatch, "spark", 99)  # a row UDF: a load per row
    results = [engine_workers.built(MODEL, "the model") for _ in range(3)]
    assert [r[1] is None for r in results] == [True, True, False]
    assert "3 times in one Spark task" in results[2][1] and "pandas_udf" in results[2][2]


def test_worker_warnings_reach_the_driver_through_the_report_file(tmp_path, monkeypatch, capsys):
    path = tmp_path / "report.txt"
    monkeypatch.setenv(engine_workers.REPORT_ENV, str(path))
    monkeypatch.setattr(engine_workers, "reporting", False)
    engine_workers.report("TFP301: not a worker")  # the driver itself reports nothing
    assert not path.exists()
    monkeypatch.setattr(engine_workers, "reporting", True)
    engine_workers.report("TFP301: a load\nper task")
    engine_workers.report("TFP301: a load\nper task")  # two workers, the same words: printed once
    engine_workers._print_reports(str(path))
    assert capsys.readouterr().err == "tfproc-guard (from an engine worker): TFP301: a load per task\n"
    assert not path.exists()


def test_ray_init_gives_workers_the_guard_unless_the_program_has_a_hook(monkeypatch, tmp_path):
    monkeypatch.setenv(engine_workers.REPORT_ENV, str(tmp_path / "r.txt"))
    init = engines._ray_init(lambda *args, **kwargs: kwargs)
    env = init(num_cpus=2)["runtime_env"]
    assert env["worker_process_setup_hook"] == engines.WORKER_SETUP
    assert env["env_vars"] == {engine_workers.REPORT_ENV: str(tmp_path / "r.txt")}
    env = init(runtime_env={"env_vars": {"A": "1"}, "pip": ["x"]})["runtime_env"]
    assert env["env_vars"]["A"] == "1" and env["pip"] == ["x"] and "worker_process_setup_hook" in env
    own = {"worker_process_setup_hook": "mine.setup"}
    assert init(runtime_env=own)["runtime_env"] is own


def test_spark_gets_the_guards_daemon_unless_the_program_chose_one():
    class JConf:
        def __init__(self, **settings):
            self.settings = dict(settings)

        def setIfMissing(self, key, value):  # noqa: N802 - Spark's name
            self.settings.setdefault(key, value)

    initialize = engines._spark_context(lambda self, jconf: jconf.settings)
    assert initialize(None, JConf()) == {"spark.python.daemon.module": engines.SPARK_DAEMON}
    assert initialize(None, JConf(**{"spark.python.daemon.module": "mine"})) == {"spark.python.daemon.module": "mine"}


def test_dasks_keras_serializer_failure_names_tfp102():
    keras = pytest.importorskip("keras")  # the real class Dask registers its serializer for

    class Dispatch:
        def __init__(self):
            self.registered = {}

        def register(self, cls):
            return lambda function: self.registered.setdefault(cls, function)

    def serialize_keras_model(model):  # Dask's own, under Keras 3
        raise AttributeError(f"'{type(model).__name__}' object has no attribute '_updated_config'")

    module = types.SimpleNamespace(serialize_keras_model=serialize_keras_model, dask_serialize=Dispatch())
    engines.patch_dask_keras(module)
    assert module.dask_serialize.registered[keras.Model] is module.serialize_keras_model
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    with pytest.raises(AttributeError) as caught:
        module.serialize_keras_model(model)
    assert caught.value.code == "TFP102" and "Dask's Keras serializer" in str(caught.value)
    assert "_updated_config" in str(caught.value.__cause__)
