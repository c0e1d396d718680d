"""The library knowledge in tfproc_lint/analysis/api.py against the installed libraries: every
TensorFlow, Keras and process name the analysis relies on exists (so a rename shows up here, not
as a silent miss), and the runtime facts that can be checked without running anything hold."""

from __future__ import annotations

import importlib
import importlib.util
import multiprocessing

import pytest

from tfproc_lint.analysis import api

tf = pytest.importorskip("tensorflow", reason="TensorFlow is needed (the `probe` extra)")
keras = pytest.importorskip("keras")

OPTIONAL_ROOTS = ("tensorflow_hub", "tensorflow_datasets", "joblib", "loky", "pathos", "psutil",
                  "ray", "dask", "distributed", "pyspark")  # the engines: the `engines` extra


def _attribute_path(root, parts):
    for part in parts:
        root = getattr(root, part)
    return root


def resolve(name: str):
    """The object a canonical name stands for, trying the spellings names.py folds together."""
    head, _, rest = name.partition(".")
    if head in OPTIONAL_ROOTS and importlib.util.find_spec(head) is None:
        pytest.skip(f"{head} is not installed")
    candidates = {
        "tensorflow": [tf, tf.compat.v1],
        "keras": [keras, importlib.import_module("keras.src"), tf.keras, tf.compat.v1.keras],
        "multiprocessing": [multiprocessing, *(importlib.import_module(f"multiprocessing.{m}")
                                               for m in ("pool", "context", "managers", "queues", "connection"))],
    }.get(head)
    if candidates is None:
        candidates = [importlib.import_module(head)]
    parts = rest.split(".") if rest else []
    for root in candidates:
        # the longest importable module prefix, then attributes
        for split in range(len(parts), -1, -1):
            module_name = ".".join([root.__name__, *parts[:split]])
            try:
                module = importlib.import_module(module_name) if split else root
                return _attribute_path(module, parts[split:])
            except (ImportError, AttributeError):
                continue
    raise LookupError(name)


NAMES = sorted((
    set(api.STATE_CONSTRUCTORS) | set(api.GRAPH_MODE_STATE) | set(api.STATE_BASES) | api.RUNTIME_QUERIES
    | api.GRAPH_MODE_SWITCHES | api.TF1_GRAPH_API | set(api.RUNTIME_CONFIGURATION) | api.KERAS_BUILDS_AT_ONCE
    | api.KERAS_SEQUENTIAL | set(api.PROCESS_CONSTRUCTORS) | set(api.PROCESS_BASES) | set(api.CONTEXT_CLASSES)
    | api.FORK_CALLS | api.PROCESS_EXITS | api.FIX_LOADERS | api.KERAS_DATASET_BASES
    | {"multiprocessing." + method for method in api.CONTEXT_METHODS} | {api.SET_START_METHOD}
    | set(api.POOL_SIZE_ARGUMENTS) | api.CPU_COUNT_CALLS | api.EXPAND_DIMS | api.ARRAYS_FROM_LISTS
    | api.ROW_CONVERSIONS


    | api.CONTEXT_FIXING_CALLS | {api.GET_CONTEXT, api.GET_START_METHOD, api.ENVIRON, api.PUTENV}
    | api.GPU_ONLY_CONFIGURATION | api.GPU_MEMORY_LIMITS | api.GPU_QUERIES
    | {api.LIST_PHYSICAL_DEVICES, api.SET_MEMORY_GROWTH}
) - api.REMOVED_NAMES - {"threading.Thread"})


@pytest.mark.parametrize("name", NAMES)
def test_every_named_api_exists(name: str) -> None:
    assert resolve(name) is not None


@pytest.mark.parametrize("op", sorted(api.TOP_LEVEL_OPS))
def test_top_level_ops_exist(op: str) -> None:
    assert callable(resolve(f"tensorflow.{op}"))


@pytest.mark.parametrize("namespace", sorted(api.EAGER_OP_NAMESPACES))
def test_op_namespaces_exist(namespace: str) -> None:
    assert resolve(f"tensorflow.{namespace}") is not None


def test_tf1_only_spellings_are_tf1_only() -> None:
    for name in api.TF1_ONLY_SPELLINGS:
        attribute = name.split(".", 1)[1]
        assert not hasattr(tf, attribute), f"{name} exists in TF2's top level: not TF1-only"
        assert hasattr(tf.compat.v1, attribute)


def test_methods_exist_on_their_classes() -> None:
    model_methods = set(dir(keras.Model))
    removed = {"fit_generator", "predict_generator", "evaluate_generator"}  # Keras 2 only, still in old code
    assert (api.MODEL_RUNS | api.KERAS_WORKER_METHODS) - removed <= model_methods
    assert api.SESSION_RUNS <= set(dir(tf.compat.v1.Session))
    assert api.DATASET_METHODS - {"ragged_batch"} <= set(dir(tf.data.Dataset))
    assert {"from_tensor_slices", "from_tensors", "from_generator", "range", "zip", "list_files"} \
        <= set(dir(tf.data.Dataset)) and api.DATASET_FACTORIES <= set(dir(tf.data.Dataset)) | {"load"}
    assert api.GRAPH_LOOKUPS <= set(dir(tf.Graph))
    assert {"minimize", "apply_gradients"} <= set(dir(tf.compat.v1.train.Optimizer))
    context = multiprocessing.get_context("spawn")
    assert all(hasattr(context, method) for method in api.CONTEXT_METHODS)
    from multiprocessing.managers import DictProxy, ListProxy

    proxy_methods = set(dir(ListProxy)) | set(dir(DictProxy)) | {"set"}
    assert api.PROXY_SENDING_METHODS <= proxy_methods


def test_not_ops_are_not_ops() -> None:
    for name in api.NOT_OPS:
        assert resolve(f"tensorflow.{name}") is not None


def test_pool_size_arguments_name_the_worker_count() -> None:
    import inspect

    for name, (position, keyword) in api.POOL_SIZE_ARGUMENTS.items():
        if name.split(".")[0] in OPTIONAL_ROOTS and importlib.util.find_spec(name.split(".")[0]) is None:
            continue
        parameters = list(inspect.signature(resolve(name)).parameters)
        assert parameters[position] == keyword, name


def test_new_axis_is_none_and_row_methods_are_array_methods() -> None:
    import numpy as np

    for name in api.NEW_AXIS:
        module, _, attribute = name.rpartition(".")
        assert getattr(importlib.import_module(module), attribute, "missing") is None, name
    assert api.ROW_METHODS <= set(dir(np.ndarray))
    assert api.MODEL_BATCH_METHODS <= set(dir(keras.Model))


def test_configuration_errors_are_tensorflows_own_words() -> None:
    import inspect

    from tensorflow.python.eager import context

    source = inspect.getsource(context)
    for name, error in api.RUNTIME_CONFIGURATION.items():
        assert error in source, f"{name}: {error!r} is not in tensorflow/python/eager/context.py"
    assert set(api.GPU_ONLY_CONFIGURATION) <= set(api.RUNTIME_CONFIGURATION)


def test_gpu_memory_options_are_gpu_options_fields() -> None:
    fields = set(tf.compat.v1.GPUOptions.DESCRIPTOR.fields_by_name)
    assert api.GPU_MEMORY_OPTIONS <= fields


CHEAP_FIXERS = sorted(name.split(".")[1] for name in api.CONTEXT_FIXING_CALLS
                      if name.split(".")[1] not in ("Pool", "Manager", "set_start_method"))
ARGUMENTS = {"Semaphore": "", "Barrier": "1", "Value": "'i'", "Array": "'i', 1"}


@pytest.mark.parametrize("factory", CHEAP_FIXERS)
def test_context_fixing_calls_fix_the_start_method(factory: str) -> None:
    """After `multiprocessing.<factory>()`, `set_start_method` without force=True raises."""
    import subprocess
    import sys

    program = (f"import multiprocessing as mp\nmp.{factory}({ARGUMENTS.get(factory, '')})\n"
               "try:\n    mp.set_start_method('spawn')\nexcept RuntimeError as e:\n    print(e)\n")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert "context has already been set" in done.stdout, done.stderr


ENGINE_NAMES = sorted(
    set(api.ENGINE_FACTORIES) | set(api.ENGINE_OBJECT_CLASSES.values()) | {api.RAY_REMOTE, api.RAY_PUT}
    | api.DASK_DELAYED | api.SPARK_ROW_UDFS | api.SPARK_PANDAS_UDFS | api.ITERATOR_TYPES
    | {f"pyspark.sql.functions.PandasUDFType.SCALAR{suffix}" for suffix in api.SPARK_ITERATOR_UDF_TYPES}
)


@pytest.mark.parametrize("name", ENGINE_NAMES)
def test_every_engine_name_exists(name: str) -> None:
    assert resolve(name) is not None


ENGINE_MEMBERS = sorted(
    {key for key in api.ENGINE_TASK_METHODS} | set(api.ENGINE_SENDS)
    | {key for key in api.ENGINE_PRODUCES if key[1] != "*"}
    | {("dask.client", name) for name in api.DASK_INITIALIZERS if name != "register_worker_plugin"}
)


@pytest.mark.parametrize("kind, member", ENGINE_MEMBERS)
def test_engine_objects_have_the_methods_the_analysis_reads(kind: str, member: str) -> None:
    """`rdd.mapPartitions`, `client.scatter`, `SparkSession.sparkContext`, ...: each on its class."""
    cls = resolve(api.ENGINE_OBJECT_CLASSES[kind])
    assert hasattr(cls, member), f"{api.ENGINE_OBJECT_CLASSES[kind]} has no {member}"


def test_ray_remote_functions_have_remote_and_options() -> None:
    ray = pytest.importorskip("ray")
    task = ray.remote(lambda: None)
    assert hasattr(task, api.RAY_SUBMIT) and hasattr(task, api.RAY_OPTIONS)
