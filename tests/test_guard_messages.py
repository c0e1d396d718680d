"""What the guard's messages say: the kind of a TensorFlow object (objects.kind, by the classes' modules
and names: stand-ins here, the real classes in the `tensorflow` test at the end), one full stop where a
quoted error ends its own sentence, and the fork error that says it *can* hang and how to make it a
warning (TFPROC_GUARD_WARN, `python -m tfproc_lint.guard --warn`)."""

from __future__ import annotations

import json
import os
import sys
import textwrap
import types
import warnings

import pytest

import processes
from conftest import run_env
from tfproc_lint.guard import costs, crossing, environ, errors, objects, state, tfhooks
from tfproc_lint.knowledge.environment import RUNTIME_ENVIRONMENT


def cls(name: str, module: str, *bases: type) -> type:
    return type(name, bases or (object,), {"__module__": module})


# The real MROs (TF 2.21, Keras 3.15) of what the guard meets, down to the classes it goes by.
Trackable = cls("Trackable", "tensorflow.python.trackable.base")
AutoTrackable = cls("AutoTrackable", "tensorflow.python.trackable.autotrackable", Trackable)
KerasFunction = cls("Function", "keras.src.ops.function")
KerasOperation = cls("Operation", "keras.src.ops.operation")
Layer = cls("Layer", "keras.src.layers.layer", AutoTrackable, KerasOperation)
Model = cls("Model", "keras.src.models.model", Layer)
Functional = cls("Functional", "keras.src.models.functional", KerasFunction, Model)
Sequential = cls("Sequential", "keras.src.models.sequential", Model)
Subclassed = cls("Net", "__main__", Model)
KerasHubModel = cls("CausalLM", "keras_hub.src.models.causal_lm", Model)
TfModule = cls("Module", "tensorflow.python.module.module", AutoTrackable)
TfKerasModel = cls("Model", "tf_keras.src.engine.training", cls("Layer", "tf_keras.src.engine.base_layer", TfModule))
UserObject = cls("_UserObject", "tensorflow.python.saved_model.load", AutoTrackable)
BaseSession = cls("BaseSession", "tensorflow.python.client.session")
Graph = cls("Graph", "tensorflow.python.framework.ops")
TfFunction = cls("Function", "tensorflow.python.eager.polymorphic_function.polymorphic_function", Trackable)
DatasetV2 = cls("DatasetV2", "tensorflow.python.data.ops.dataset_ops")
Dataset = cls("_MapDataset", "tensorflow.python.data.ops.map_op", DatasetV2)

KINDS = [
    (Functional, "TFP102", "a Keras model (keras.src.models.functional.Functional)"),
    (Sequential, "TFP102", "a Keras model (keras.src.models.sequential.Sequential)"),
    (Subclassed, "TFP102", "a Keras model (__main__.Net)"),
    (KerasHubModel, "TFP102", "a Keras model (keras_hub.src.models.causal_lm.CausalLM)"),
    (TfKerasModel, "TFP102", "a Keras model (tf_keras.src.engine.training.Model)"),
    (cls("Dense", "keras.src.layers.core.dense", Layer), "TFP102", "a Keras layer (keras.src.layers.core.dense.Dense)"),
    (TfModule, "TFP102", "a tf.Module (tensorflow.python.module.module.Module)"),
    (cls("Scaler", "__main__", TfModule), "TFP102", "a tf.Module (__main__.Scaler)"),
    (UserObject, "TFP102", "a loaded SavedModel (tensorflow.python.saved_model.load._UserObject)"),
    (cls("Session", "tensorflow.python.client.session", BaseSession), "TFP101",
     "a tf.compat.v1.Session (tensorflow.python.client.session.Session)"),
    (cls("FuncGraph", "tensorflow.python.framework.func_graph", Graph), "TFP101",
     "a tf.Graph (tensorflow.python.framework.func_graph.FuncGraph)"),
    (TfFunction, "TFP102",
     "a tf.function (tensorflow.python.eager.polymorphic_function.polymorphic_function.Function)"),
    (Dataset, "TFP102", "a tf.data.Dataset (tensorflow.python.data.ops.map_op._MapDataset)"),
]


@pytest.mark.parametrize("made, code, what", KINDS, ids=[what.split(" (")[0] + "-" + made.__name__
                                                         for made, _, what in KINDS])
def test_each_kind_is_named_by_its_own_class_not_a_base_of_another_package(made, code, what):
    assert objects.kind(made()) == (code, what)


@pytest.mark.parametrize("made", [KerasFunction, KerasOperation, cls("Model", "kerastuner.engine"),
                                  cls("Function", "mylib.tensorflow_utils")])
def test_look_alike_names_of_other_packages_are_no_kind(made):
    assert objects.kind(made()) is None


class Predictor:
    def __init__(self, model):
        self.model = model

    def predict(self, rows):
        return self.model(rows)


@pytest.mark.parametrize("model, what", [(Functional(), "a Keras model (keras.src.models.functional.Functional)"),
                                         (Subclassed(), "a Keras model (__main__.Net)")])
def test_a_model_held_by_a_bound_methods_object_is_a_keras_model(model, what):
    found = objects.find([(Predictor(model).predict, [1.0, 2.0])])
    assert (found.code, found.what, found.how) == ("TFP103", what,
                                                   "held by the object of the bound method sent as the worker")
    assert found.obj is model


def test_a_quoted_error_that_ends_its_sentence_gets_no_second_full_stop():
    refused = RuntimeError("Intra op parallelism cannot be modified after initialization.")
    text = errors.text("TFP402", f"set_intra_op_parallelism_threads() after the start; TensorFlow refuses: {refused}")
    assert "after initialization. Fix: make the setting" in text and ".." not in text
    assert errors.text("TFP402", "too late").startswith("TFP402: too late. Fix: ")


def test_a_refused_setting_names_the_refusal_once(monkeypatch):
    monkeypatch.setattr(state, "started", state.Start("the eager context was initialised", "prog.py:3", 0.0, 1))

    def set_threads(value):
        raise RuntimeError("Intra op parallelism cannot be modified after initialization.")

    with pytest.raises(errors.ConfigurationError) as caught:
        tfhooks._setter(set_threads, "tf.config.threading set_intra_op_parallelism_threads()")(1)
    message = str(caught.value)
    assert "TensorFlow refuses: RuntimeError: Intra op parallelism cannot be modified after initialization. Fix: " \
           in message, message
    assert ".." not in message


@pytest.mark.parametrize("variable", sorted(RUNTIME_ENVIRONMENT))
def test_a_variable_set_after_the_start_is_explained_as_the_linter_explains_it(monkeypatch, variable):
    """The guard's TFP403 warning takes its explanation from the linter's table (knowledge/environment.py):
    its own copy had lost what CUDA_VISIBLE_DEVICES set too late does to workers."""
    monkeypatch.setenv(variable, "before")  # undone last, after os.environ is plain again
    monkeypatch.setattr(state, "started", state.Start("the eager context was initialised", "prog.py:3", 0.0,
                                                      os.getpid()))
    monkeypatch.setattr(os.environ, "__class__", environ.GuardedEnviron)
    with pytest.warns(errors.GuardWarning) as caught:
        os.environ[variable] = "after"
    message = str(caught[0].message)
    assert message.startswith(f"TFP403: os.environ[{variable!r}] set at ")
    assert f": {RUNTIME_ENVIRONMENT[variable]} (worker processes started after this do see it)" in message


@pytest.fixture
def forked_child(monkeypatch):
    """This process as a child forked after its parent's runtime started, with a stand-in for TensorFlow's
    eager executor: what tfhooks.arm_fork_child traps."""
    pywrap = types.ModuleType(tfhooks.PYWRAP_TFE)
    pywrap.TFE_Py_FastPathExecute = lambda *args: "ran"
    monkeypatch.setitem(sys.modules, tfhooks.PYWRAP_TFE, pywrap)
    monkeypatch.delitem(sys.modules, tfhooks.SESSION, raising=False)
    monkeypatch.setattr(state, "started", state.Start("the eager context was initialised", "prog.py:3", 0.0, 1))
    monkeypatch.setattr(state, "forked_from", 1)
    monkeypatch.setattr(state, "parent_pid", None)
    monkeypatch.delenv(state.WARN_ENV, raising=False)
    tfhooks.arm_fork_child(crossing.fork_child_error)
    return pywrap


def test_the_fork_error_says_it_can_hang_why_the_guard_stopped_and_how_to_only_warn(forked_child):
    with pytest.raises(errors.ForkAfterStartError) as caught:
        forked_child.TFE_Py_FastPathExecute()
    message = str(caught.value)
    assert "this can hang: the runtime's thread pools do not survive the fork, so an op big enough to use them " \
           "waits forever (small ops run inline and may pass)" in message
    assert "the guard stopped the run so that it fails now instead of hanging later (to only warn: python -m " \
           "tfproc_lint.guard --warn, or TFPROC_GUARD_WARN=1)" in message
    assert "would hang" not in message


def test_tfproc_guard_warn_makes_the_fork_error_a_warning_and_runs_the_ops(forked_child, monkeypatch):
    monkeypatch.setenv(state.WARN_ENV, "1")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert [forked_child.TFE_Py_FastPathExecute() for _ in range(3)] == ["ran"] * 3
    assert len(caught) == 1 and caught[0].category is errors.GuardWarning  # once per process
    message = str(caught[0].message)
    assert message.startswith("TFP201: an op ran in process") and "this can hang" in message
    assert "the guard only warns (TFPROC_GUARD_WARN is set) and lets it run" in message


def test_tfproc_guard_warn_makes_a_model_sent_to_forked_workers_a_warning(monkeypatch):
    monkeypatch.setattr(crossing, "_pool_forked_after_start", lambda: True)
    monkeypatch.setattr(state, "started", state.Start("the eager context was initialised", "prog.py:3", 0.0, 1))
    monkeypatch.setattr(costs, "_warned", set())
    task = (0, 0, len, (Sequential(),), {})
    with pytest.raises(errors.CrossingError, match="TFP102: a Keras model .* can hang"):
        crossing.sent(task, b"keras", "a Pool task (map, apply, imap and friends)")
    monkeypatch.setenv(state.WARN_ENV, "1")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            crossing.sent(task, b"keras", "a Pool task (map, apply, imap and friends)")
    assert len(caught) == 1 and "the guard only warns" in str(caught[0].message)


@pytest.mark.parametrize("value, on", [("1", True), ("true", True), ("0", False), ("", False), ("no", False)])
def test_tfproc_guard_warn_values(monkeypatch, value, on):
    monkeypatch.setenv(state.WARN_ENV, value)
    assert state.warn_only() is on


def test_the_warn_flag_sets_the_variable_for_the_program_and_its_workers(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text("import os, sys\nprint(sys.argv[1:], os.environ.get('TFPROC_GUARD_WARN'))\n", encoding="utf-8")
    env = run_env()
    env.pop(state.WARN_ENV, None)
    command = [sys.executable, "-m", "tfproc_lint.guard"]
    warned = processes.run([*command, "--warn", str(script), "--warn"], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=120)
    plain = processes.run([*command, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert warned.stdout.strip() == "['--warn'] 1", warned.stderr  # the script's own --warn is its argument
    assert plain.stdout.strip() == "[] None", plain.stderr
    helped = processes.run([*command, "--help"], env=env, capture_output=True, text=True, timeout=120)
    assert "--warn" in helped.stdout and "TFPROC_GUARD_WARN=1" in helped.stdout


REAL_KINDS = '''
import json, tempfile
import keras
import tensorflow as tf
from tfproc_lint.guard import objects

class Net(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(2)

    def call(self, x):
        return self.dense(x)

class Doubler(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def __call__(self, x):
        return x * 2

inputs = keras.Input((4,))
folder = tempfile.mkdtemp()
tf.saved_model.save(Doubler(), folder)
function = tf.function(lambda x: x)
made = {
    "functional": keras.Model(inputs, keras.layers.Dense(2)(inputs)),
    "sequential": keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)]),
    "subclassed": Net(),
    "layer": keras.layers.Dense(2),
    "module": Doubler(),
    "savedmodel": tf.saved_model.load(folder),
    "session": tf.compat.v1.Session(),
    "graph": tf.Graph(),
    "dataset": tf.data.Dataset.range(3).map(lambda x: x),
    "function": function,
    "concrete": function.get_concrete_function(tf.TensorSpec([None], tf.float32)),
}
print(json.dumps({name: objects.kind(obj) for name, obj in made.items()}))
'''


@pytest.mark.tensorflow
def test_the_real_classes_are_named_by_their_kind(tmp_path):
    pytest.importorskip("tensorflow")
    env = run_env()
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    proc = processes.run([sys.executable, "-c", textwrap.dedent(REAL_KINDS)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    kinds = {name: tuple(kind) for name, kind in json.loads(proc.stdout.strip().splitlines()[-1]).items()}
    assert kinds == {
        "functional": ("TFP102", "a Keras model (keras.src.models.functional.Functional)"),
        "sequential": ("TFP102", "a Keras model (keras.src.models.sequential.Sequential)"),
        "subclassed": ("TFP102", "a Keras model (__main__.Net)"),
        "layer": ("TFP102", "a Keras layer (keras.src.layers.core.dense.Dense)"),
        "module": ("TFP102", "a tf.Module (__main__.Doubler)"),
        "savedmodel": ("TFP102", "a loaded SavedModel (tensorflow.python.saved_model.load.Loader."
                                 "_recreate_base_user_object.<locals>._UserObject)"),
        "session": ("TFP101", "a tf.compat.v1.Session (tensorflow.python.client.session.Session)"),
        "graph": ("TFP101", "a tf.Graph (tensorflow.python.framework.ops.Graph)"),
        "dataset": ("TFP102", "a tf.data.Dataset (tensorflow.python.data.ops.map_op._MapDataset)"),
        "function": ("TFP102", "a tf.function (tensorflow.python.eager.polymorphic_function.polymorphic_function."
                               "Function)"),
        "concrete": ("TFP102", "a concrete tf.function (tensorflow.python.eager.polymorphic_function."
                               "concrete_function.ConcreteFunction)"),
    }


WARN_FORK = '''
import multiprocessing as mp

import tensorflow as tf


def small_op(queue):
    queue.put(float(tf.reduce_sum(tf.constant([1.0, 2.0]) + 1.0)))  # small enough to run inline


if __name__ == "__main__":
    print("parent:", float(tf.reduce_sum(tf.constant([1.0, 2.0]))), flush=True)  # the runtime starts
    fork = mp.get_context("fork")
    queue = fork.Queue()
    child = fork.Process(target=small_op, args=(queue,))
    child.start()
    print("child:", queue.get(timeout=120), flush=True)
    child.join(120)
    print("exit code:", child.exitcode)
'''


@pytest.mark.tensorflow
def test_with_warn_a_small_op_in_a_forked_child_warns_and_runs(tmp_path):
    pytest.importorskip("tensorflow")
    script = tmp_path / "prog.py"
    script.write_text(WARN_FORK, encoding="utf-8")
    env = run_env()
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    proc = processes.run([sys.executable, "-m", "tfproc_lint.guard", "--warn", str(script)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "child: 5.0" in proc.stdout and "exit code: 0" in proc.stdout
    warned = [line for line in proc.stderr.splitlines() if "GuardWarning" in line]
    assert len(warned) == 1, proc.stderr[-3000:]
    assert "TFP201: an op ran in process" in warned[0] and "this can hang" in warned[0]
    assert "the guard only warns (TFPROC_GUARD_WARN is set) and lets it run" in warned[0]
