"""The guard's cost warnings for Ray, Dask and Spark, without the engines: one-row model calls in engine
tasks (TFP303, engine_workers.py), the same model pickled into many tasks (TFP102/103, engine_sends.py)
and a GPU worker next to others (TFP401, gpu.py: the decision only, as this machine has no GPU). The
probe runs the real engine scenarios under the guard (docs/probe, the guard column)."""

from __future__ import annotations

import sys
import types
import warnings

import pytest

from tfproc_lint.guard import costs, engine_sends, engine_workers, engines, errors, gpu


def keras_class(name: str = "Model"):
    return type(name, (), {"__module__": "keras.src.models.model", "predict": lambda self, x: x})


Model = keras_class()
Session = type("BaseSession", (), {"__module__": "tensorflow.python.client.session"})


@pytest.fixture
def fresh(monkeypatch):
    monkeypatch.setattr(engine_workers, "_spark_calls", [None, 0, 0])
    monkeypatch.setattr(engine_workers, "_row_tasks", set())
    monkeypatch.setattr(engine_workers, "_row_calls", [0, 0])
    monkeypatch.setattr(engine_sends, "_sent", {})
    monkeypatch.setattr(costs, "_warned", set())
    monkeypatch.setattr(costs, "_one_row_calls", 0)
    monkeypatch.setattr(costs, "_model_calls", 0)
    if "tensorflow" not in sys.modules:  # the sends are searched only once the program imported it
        monkeypatch.setitem(sys.modules, "tensorflow", types.ModuleType("tensorflow"))


def in_task(monkeypatch, engine: str, task) -> None:
    monkeypatch.setattr(engine_workers, "current_task", lambda: (engine, task))


def guard_warnings(caught) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, errors.GuardWarning)]


# --- TFP303: one-row model calls in engine tasks -------------------------------------------------
def test_outside_engine_tasks_model_calls_are_the_pools(fresh):
    assert engine_workers.model_called(True) == (False, None, None)


def test_spark_warns_on_a_loop_of_one_row_calls_in_one_task(fresh, monkeypatch):
    in_task(monkeypatch, "spark", 7)
    results = [engine_workers.model_called(True) for _ in range(engine_workers.ROW_CALLS)]
    assert all(r[0] for r in results) and [r[1] is None for r in results[-2:]] == [True, False]
    assert "100 times in one Spark task" in results[-1][1] and "np.stack" in results[-1][2]


def test_spark_counts_each_task_alone_and_quiet_for_batches(fresh, monkeypatch):
    for partition in range(40):  # the warm-up and a few rows per partition: a new task starts again from 0
        in_task(monkeypatch, "spark", partition)
        assert all(engine_workers.model_called(True)[1] is None for _ in range(engine_workers.ROW_CALLS - 1))
    in_task(monkeypatch, "spark", 99)  # one stacked call per partition, then rows: most calls are batches
    for _ in range(engine_workers.ROW_CALLS):
        assert engine_workers.model_called(False)[1] is None
    assert all(engine_workers.model_called(True)[1] is None for _ in range(engine_workers.ROW_CALLS))


def test_dask_and_ray_warn_on_one_row_per_task_across_the_workers_tasks(fresh, monkeypatch):
    results = []
    for task in range(engine_workers.ROW_CALLS):
        in_task(monkeypatch, "dask", ("predict_row", task))
        results.append(engine_workers.model_called(True))
    assert [r[1] is None for r in results[-2:]] == [True, False]
    assert "about once per task (100 Dask tasks)" in results[-1][1] and "np.array_split" in results[-1][2]


def test_a_ray_task_that_loops_over_one_row_calls_is_not_tfp303(fresh, monkeypatch):
    in_task(monkeypatch, "ray", "rollout")  # a rollout or a decoding loop: each call needs the one before
    assert all(engine_workers.model_called(True)[1] is None for _ in range(10 * engine_workers.ROW_CALLS))


def test_the_workers_keras_hook_warns_in_engine_tasks_and_leaves_the_pool_counts(fresh, monkeypatch):
    in_task(monkeypatch, "spark", 1)
    row = types.SimpleNamespace(shape=(1, 64))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(engine_workers.ROW_CALLS):
            costs.model_called(row)
    [message] = guard_warnings(caught)
    assert message.startswith("TFP303: worker process") and "Fix: stack the partition's rows" in message
    assert costs._one_row_calls == costs._model_calls == 0


# --- TFP102/103: the same model pickled into many Ray or Dask tasks ---------------------------------
class FakeClient:
    def submit(self, func, *args, **kwargs):
        return "future"

    def map(self, func, *iterables, **kwargs):
        return ["future"] * len(iterables[0])


def dask_client():
    class Client(FakeClient):
        pass

    engines.patch_dask(types.SimpleNamespace(Client=Client))
    return Client()


def test_dask_map_of_a_models_bound_method_warns_tfp103_once_three_tasks_carry_it(fresh):
    client, model = dask_client(), Model()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert client.map(model.predict, [1, 2], verbose=0) == ["future"] * 2  # the warm-up: 2 tasks
        assert guard_warnings(caught) == []
        client.map(model.predict, [3, 4, 5])
    [message] = guard_warnings(caught)
    assert message.startswith("TFP103: a Keras model") and "5 tasks so far" in message
    assert "bound method or closure" in message and "WorkerPlugin" in message


def test_dask_submit_with_the_model_as_argument_warns_tfp102(fresh):
    client, model = dask_client(), Model()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for x in range(3):
            client.submit(lambda m, x: x, model, x)
    [message] = guard_warnings(caught)
    assert message.startswith("TFP102: a Keras model") and "3 tasks so far" in message


def test_a_file_path_or_a_model_sent_twice_is_quiet(fresh):
    client, model = dask_client(), Model()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        client.map(lambda path, x: x, ["/m.keras"] * 50, list(range(50)))
        client.submit(lambda m: m, model)
        client.submit(lambda m: m, model)
        client.submit(lambda s: s, Session())  # a session does not pickle at all: engines.explain's error
        client.submit(lambda s: s, Session())
        client.submit(lambda s: s, Session())
    assert guard_warnings(caught) == []


def test_ray_counts_the_arguments_of_each_call_not_the_exported_function(fresh):
    class RemoteFunction:
        def __init__(self, function):
            self._function = function

        def _remote(self, args=None, kwargs=None):
            return "ref"

    engines._wrap(RemoteFunction, "_remote", "ray", "a Ray task", engines._ray_call, engines._one_task)
    model = Model()
    holder = RemoteFunction(lambda x: model.predict(x))  # a closure over the model: exported once
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for x in range(5):
            holder._remote(args=(x,), kwargs={})
        assert guard_warnings(caught) == []
        for x in range(3):
            RemoteFunction(lambda m, x: x)._remote(args=(model, x), kwargs={})
    [message] = guard_warnings(caught)
    assert message.startswith("TFP102: a Keras model") and "every Ray task" in message and "actor" in message


def test_no_search_before_tensorflow_or_keras_is_imported(fresh, monkeypatch):
    monkeypatch.delitem(sys.modules, "keras", raising=False)
    monkeypatch.delitem(sys.modules, "tensorflow", raising=False)
    monkeypatch.setattr(engine_sends.objects, "find", lambda obj: pytest.fail("searched"))
    engine_sends.tasks_sent("dask", Model().predict, ((), {}), 10)


# --- TFP401: a TensorFlow worker on a GPU next to other workers (the decision; no GPU here) -------
def test_ray_workers_share_a_gpu_with_fractional_or_zero_num_gpus():
    assert "num_gpus=0.5, so up to 2 of them share each GPU" in gpu.ray_sharing(0.5)
    assert "num_gpus=0.25, so up to 4" in gpu.ray_sharing(0.25)
    assert "RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO" in gpu.ray_sharing(0.0)
    assert gpu.ray_sharing(1.0) is None and gpu.ray_sharing(2.0) is None


class FakeContext:
    def __init__(self, gpus: int, growth: bool = False):
        self.gpus = [f"/physical_device:GPU:{i}" for i in range(gpus)]
        self.growth = growth

    def list_physical_devices(self, kind):
        return self.gpus

    def get_memory_growth(self, device):
        return self.growth

    def get_logical_device_configuration(self, device):
        return None


def in_ray_worker(monkeypatch, assigned: dict) -> None:
    context = types.SimpleNamespace(get_assigned_resources=lambda: assigned)
    monkeypatch.setitem(sys.modules, "ray", types.SimpleNamespace(get_runtime_context=lambda: context))
    monkeypatch.setattr(engine_workers, "reporting", True)
    monkeypatch.delenv("TF_FORCE_GPU_ALLOW_GROWTH", raising=False)


def tfp401(context) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gpu.check_worker_memory(context)
    return guard_warnings(caught)


def test_a_ray_worker_with_half_a_gpu_and_the_default_policy_warns(monkeypatch, tmp_path):
    in_ray_worker(monkeypatch, {"GPU": 0.5, "CPU": 1.0})
    monkeypatch.setenv(engine_workers.REPORT_ENV, str(tmp_path / "report.txt"))
    [message] = tfp401(FakeContext(1))
    assert message.startswith("TFP401: worker process") and "num_gpus=0.5" in message
    assert (tmp_path / "report.txt").read_text().startswith("TFP401: worker process")  # handed to the driver


def test_a_ray_worker_with_its_own_gpu_memory_growth_or_no_gpu_is_quiet(monkeypatch):
    in_ray_worker(monkeypatch, {"GPU": 1.0})
    assert tfp401(FakeContext(1)) == []
    in_ray_worker(monkeypatch, {"GPU": 0.5})
    assert tfp401(FakeContext(1, growth=True)) == []
    assert tfp401(FakeContext(0)) == []  # this machine: no GPU, nothing to say
    in_ray_worker(monkeypatch, {"CPU": 1.0})
    assert tfp401(FakeContext(0)) == []


def test_a_model_put_in_rays_object_store_and_handed_to_many_tasks_warns_tfp102(fresh, monkeypatch):
    monkeypatch.setattr(engine_sends, "_put", {})

    class Ref:
        def __init__(self, key):
            self.key = key

        def hex(self):
            return self.key

    class RemoteFunction:
        def __init__(self, function):
            self._function = function

        def _remote(self, args=None, kwargs=None):
            return Ref("result")

    engines._wrap(RemoteFunction, "_remote", "ray", "a Ray task", engines._ray_call, engines._one_task)
    engine_sends.object_put([1.0, 2.0], Ref("weights"))  # data: not remembered
    engine_sends.object_put(Model(), Ref("model"))
    task = RemoteFunction(lambda m, x: x)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for x in range(5):
            task._remote(args=(Ref("weights"), x), kwargs={})
        task._remote(args=(Ref("model"), 0), kwargs={})
        task._remote(args=(Ref("model"), 1), kwargs={})
        assert guard_warnings(caught) == []  # two tasks: a deliberate hand-off is possible
        task._remote(args=(), kwargs={"model": Ref("model")})
    [message] = guard_warnings(caught)
    assert message.startswith("TFP102: a Keras model") and "ray.put" in message and "3 tasks" in message
