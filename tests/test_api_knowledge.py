"""The library knowledge in tfproc_lint/knowledge/ against the
installed libraries: every TensorFlow, Keras and process name the analysis relies on exists (so a
rename shows up here, not as a silent miss), and the runtime facts that can be checked without running
anything hold."""

from __future__ import annotations

import importlib
import importlib.util
import multiprocessing

import pytest

from tfproc_lint.knowledge import batches, environment, processes, tensorflow
from tfproc_lint.knowledge import engines as knowledge

pytestmark = pytest.mark.tensorflow
tf = pytest.importorskip("tensorflow", reason="TensorFlow is needed (the `probe` extra)")
keras = pytest.importorskip("keras")

OPTIONAL_ROOTS = ("tensorflow_hub", "tensorflow_datasets", "joblib", "loky", "pathos", "psutil", "multiprocess",
                  "billiard", "ray", "dask", "distributed", "pyspark")  # the engines: the `engines` extra


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
    set(tensorflow.STATE_CONSTRUCTORS) | set(tensorflow.GRAPH_MODE_STATE) | set(tensorflow.STATE_BASES)
    | tensorflow.RUNTIME_QUERIES | tensorflow.GRAPH_MODE_SWITCHES | tensorflow.TF1_GRAPH_API
    | set(tensorflow.RUNTIME_CONFIGURATION) | tensorflow.KERAS_BUILDS_AT_ONCE | tensorflow.KERAS_SEQUENTIAL
    | set(processes.PROCESS_CONSTRUCTORS) | set(processes.PROCESS_BASES) | set(processes.CONTEXT_CLASSES)
    | processes.FORK_CALLS | processes.PROCESS_EXITS | tensorflow.FIX_LOADERS | processes.KERAS_DATASET_BASES
    | {"multiprocessing." + method for method in processes.CONTEXT_METHODS} | {processes.SET_START_METHOD}
    | set(processes.POOL_SIZE_ARGUMENTS) | processes.CPU_COUNT_CALLS | batches.EXPAND_DIMS | batches.ARRAYS_FROM_LISTS
    | batches.ROW_CONVERSIONS
    | processes.CONTEXT_FIXING_CALLS | {processes.GET_CONTEXT, processes.GET_START_METHOD}
    | {environment.ENVIRON, environment.PUTENV}
    | tensorflow.GPU_ONLY_CONFIGURATION | tensorflow.GPU_MEMORY_LIMITS | tensorflow.GPU_QUERIES
    | {tensorflow.LIST_PHYSICAL_DEVICES, tensorflow.SET_MEMORY_GROWTH} | tensorflow.DATASETS_STARTING_RUNTIME
    | set(processes.PROCESS_CLASS_START_METHODS) | set(processes.PROCESS_ALIASES)
    | set(processes.PROCESS_ALIASES.values())
) - tensorflow.REMOVED_NAMES - {"threading.Thread"})


@pytest.mark.parametrize("name", NAMES)
def test_every_named_api_exists(name: str) -> None:
    assert resolve(name) is not None


@pytest.mark.parametrize("op", sorted(tensorflow.TOP_LEVEL_OPS))
def test_top_level_ops_exist(op: str) -> None:
    assert callable(resolve(f"tensorflow.{op}"))


@pytest.mark.parametrize("namespace", sorted(tensorflow.EAGER_OP_NAMESPACES))
def test_op_namespaces_exist(namespace: str) -> None:
    assert resolve(f"tensorflow.{namespace}") is not None


def test_tf1_only_spellings_are_tf1_only() -> None:
    for name in tensorflow.TF1_ONLY_SPELLINGS:
        attribute = name.split(".", 1)[1]
        assert not hasattr(tf, attribute), f"{name} exists in TF2's top level: not TF1-only"
        assert hasattr(tf.compat.v1, attribute)


def test_methods_exist_on_their_classes() -> None:
    model_methods = set(dir(keras.Model))
    removed = {"fit_generator", "predict_generator", "evaluate_generator"}  # Keras 2 only, still in old code
    assert (tensorflow.MODEL_RUNS | processes.KERAS_WORKER_METHODS) - removed <= model_methods
    assert tensorflow.SESSION_RUNS <= set(dir(tf.compat.v1.Session))
    assert tensorflow.DATASET_METHODS - {"ragged_batch"} <= set(dir(tf.data.Dataset))
    assert {"from_tensor_slices", "from_tensors", "from_generator", "range", "zip", "list_files"} \
        <= set(dir(tf.data.Dataset)) and tensorflow.DATASET_FACTORIES <= set(dir(tf.data.Dataset)) | {"load"}
    assert tensorflow.GRAPH_LOOKUPS <= set(dir(tf.Graph))
    assert {"minimize", "apply_gradients"} <= set(dir(tf.compat.v1.train.Optimizer))
    context = multiprocessing.get_context("spawn")
    assert all(hasattr(context, method) for method in processes.CONTEXT_METHODS)
    from multiprocessing.managers import DictProxy, ListProxy

    proxy_methods = set(dir(ListProxy)) | set(dir(DictProxy)) | {"set"}
    assert processes.PROXY_SENDING_METHODS <= proxy_methods


def test_not_ops_are_not_ops() -> None:
    for name in tensorflow.NOT_OPS:
        assert resolve(f"tensorflow.{name}") is not None


def test_pool_size_arguments_name_the_worker_count() -> None:
    import inspect

    for name, (position, keyword) in processes.POOL_SIZE_ARGUMENTS.items():
        if name.split(".")[0] in OPTIONAL_ROOTS and importlib.util.find_spec(name.split(".")[0]) is None:
            continue
        parameters = list(inspect.signature(resolve(name)).parameters)
        assert parameters[position] == keyword, name


def test_new_axis_is_none_and_row_methods_are_array_methods() -> None:
    import numpy as np

    for name in batches.NEW_AXIS:
        module, _, attribute = name.rpartition(".")
        assert getattr(importlib.import_module(module), attribute, "missing") is None, name
    assert batches.ROW_METHODS <= set(dir(np.ndarray))
    assert batches.MODEL_BATCH_METHODS <= set(dir(keras.Model))


def test_configuration_errors_are_tensorflows_own_words() -> None:
    import inspect

    from tensorflow.python.eager import context

    source = inspect.getsource(context)
    for name, error in tensorflow.RUNTIME_CONFIGURATION.items():
        assert error in source, f"{name}: {error!r} is not in tensorflow/python/eager/context.py"
    assert set(tensorflow.GPU_ONLY_CONFIGURATION) <= set(tensorflow.RUNTIME_CONFIGURATION)


def test_gpu_memory_options_are_gpu_options_fields() -> None:
    fields = set(tf.compat.v1.GPUOptions.DESCRIPTOR.fields_by_name)
    assert tensorflow.GPU_MEMORY_OPTIONS <= fields


CHEAP_FIXERS = sorted(name.split(".")[1] for name in processes.CONTEXT_FIXING_CALLS
                      if name.split(".")[1] not in ("Pool", "Manager", "set_start_method"))
ARGUMENTS = {"Semaphore": "", "Barrier": "1", "Value": "'i'", "Array": "'i', 1"}


@pytest.mark.parametrize("factory", CHEAP_FIXERS)
def test_context_fixing_calls_fix_the_start_method(factory: str) -> None:
    """After `multiprocessing.<factory>()`, `set_start_method` without force=True raises."""
    import processes
    import sys

    program = (f"import multiprocessing as mp\nmp.{factory}({ARGUMENTS.get(factory, '')})\n"
               "try:\n    mp.set_start_method('spawn')\nexcept RuntimeError as e:\n    print(e)\n")
    done = processes.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert "context has already been set" in done.stdout, done.stderr


# --- derived from, or measured against, the installed libraries ------------------------------------------

def test_knowledge_names_are_canonical() -> None:
    """A table entry that canonical() rewrites could never match a resolved name."""
    from tfproc_lint.analysis.names import canonical

    tables = (set(tensorflow.STATE_CONSTRUCTORS) | set(processes.PROCESS_CONSTRUCTORS) | set(processes.PROCESS_BASES)
              | tensorflow.DATASETS_STARTING_RUNTIME | set(processes.PROCESS_CLASS_START_METHODS)
              | tensorflow.RUNTIME_QUERIES | set(processes.POOL_SIZE_ARGUMENTS) | processes.CONTEXT_FIXING_CALLS)
    assert {name for name in tables if canonical(name) != name} == set()
    assert set(processes.PROCESS_CLASS_START_METHODS) <= set(processes.PROCESS_CONSTRUCTORS)


def test_the_pool_queue_and_executor_methods_exist() -> None:
    """knowledge/processes.py's method tables (routes.py and TFP303 read them): each is a method of
    multiprocessing's Pool, Queue or the ProcessPoolExecutor, or of pathos's ProcessPool."""
    import concurrent.futures
    import multiprocessing.pool
    import multiprocessing.queues

    pool_methods = set(dir(multiprocessing.pool.Pool))
    if importlib.util.find_spec("pathos") is not None:
        pool_methods |= set(dir(importlib.import_module("pathos.multiprocessing").ProcessPool))
    else:
        pool_methods |= {"amap", "uimap", "pipe", "apipe"}
    assert set(processes.POOL_TASK_METHODS) <= pool_methods
    assert processes.ONE_TASK_METHODS <= set(processes.POOL_TASK_METHODS) | processes.EXECUTOR_TASK_METHODS
    assert processes.EXECUTOR_TASK_METHODS <= set(dir(concurrent.futures.ProcessPoolExecutor))
    assert processes.QUEUE_PUT_METHODS <= set(dir(multiprocessing.queues.Queue))


def test_process_aliases_name_the_same_object() -> None:
    """`pathos.multiprocessing.Pool` is `multiprocess.pool.Pool`: each alias and its target are one
    object, and a prefix alias (joblib's copy of loky) holds every name the knowledge has under it."""
    for alias, target in processes.PROCESS_ALIASES.items():
        assert resolve(alias) is resolve(target), alias
    for alias_prefix, target_prefix in processes.PROCESS_PREFIX_ALIASES:
        if importlib.util.find_spec(alias_prefix.split(".")[0]) is None:
            continue
        names = [name for name in processes.PROCESS_CONSTRUCTORS if name.startswith(target_prefix)]
        assert names, target_prefix
        for name in names:
            module, _, attribute = (alias_prefix + name[len(target_prefix):]).rpartition(".")
            assert hasattr(importlib.import_module(module), attribute), name


def test_process_class_start_methods_are_the_classes_own() -> None:
    for name, method in processes.PROCESS_CLASS_START_METHODS.items():
        assert resolve(name)._start_method == method, name


# Where each supported library exports its pools, processes and executors (the modules users import
# them from). billiard and a standalone loky are checked when installed.
LIBRARY_MODULES = {
    "multiprocessing": ("multiprocessing", "multiprocessing.pool", "multiprocessing.context", "multiprocessing.dummy"),
    "concurrent.futures": ("concurrent.futures", "concurrent.futures.process", "concurrent.futures.thread"),
    "multiprocess": ("multiprocess", "multiprocess.pool", "multiprocess.context", "multiprocess.dummy"),
    "billiard": ("billiard", "billiard.pool", "billiard.context"),
    "pathos": ("pathos.multiprocessing", "pathos.pools", "pathos.threading", "pathos.serial", "pathos.parallel",
               "pathos.helpers"),
    "loky": ("loky",),
    "joblib": ("joblib", "joblib.parallel", "joblib.externals.loky"),
}
# Abstract bases (their start/submit/map raise NotImplementedError): nothing to cover.
ABSTRACT = frozenset({"BaseProcess", "Executor", "AbstractWorkerPool"})
# Public pool classes the analysis deliberately does not model (canonical names), and why.
NOT_MODELLED = {
    "pathos.parallel.ParallelPool": "Parallel Python (ppft) servers: tasks travel as source text, not measured here",
}


def _process_classes(module):
    """Public pool, process and executor classes a module exports, and its context's Pool/Process."""
    import concurrent.futures
    import inspect

    bases = [concurrent.futures.Executor]
    for name in ("pool.Pool", "process.BaseProcess"):
        for root in ("multiprocessing", "multiprocess", "billiard"):
            if importlib.util.find_spec(root) is not None:
                bases.append(_attribute_path(importlib.import_module(f"{root}.{name.split('.')[0]}"),
                                             name.split(".")[1:]))
    if importlib.util.find_spec("pathos") is not None:
        from pathos.abstract_launcher import AbstractWorkerPool

        bases.append(AbstractWorkerPool)
    if importlib.util.find_spec("joblib") is not None:
        import joblib

        bases.append(joblib.Parallel)
    for attribute in dir(module):
        if attribute.startswith("_"):
            continue
        value = getattr(module, attribute)
        is_class = inspect.isclass(value) and issubclass(value, tuple(bases)) and value.__name__ not in ABSTRACT
        is_factory = inspect.ismethod(value) and attribute in ("Pool", "Process")
        if is_class or is_factory:
            yield attribute


@pytest.mark.parametrize("library", sorted(LIBRARY_MODULES))
def test_every_public_pool_process_and_executor_is_covered(library: str) -> None:
    """Each name under which a supported library exports a pool, process or executor resolves
    (through names.canonical) to something the knowledge classifies: a pool, process, executor or
    joblib Parallel, or threads (never a process boundary)."""
    from tfproc_lint.analysis.names import canonical

    if importlib.util.find_spec(library.split(".")[0]) is None:
        pytest.skip(f"{library} is not installed")
    missing, seen = [], 0
    for module_name in LIBRARY_MODULES[library]:
        module = importlib.import_module(module_name)
        for attribute in _process_classes(module):
            seen += 1
            name = canonical(f"{module_name}.{attribute}")
            known = (name in processes.PROCESS_CONSTRUCTORS or name.startswith(processes.THREAD_PREFIXES)
                     or name in NOT_MODELLED)
            if not known:
                missing.append(f"{module_name}.{attribute} -> {name}")
    assert seen, library
    assert missing == []


def test_dataset_factories_are_the_datasets_static_constructors() -> None:
    import inspect

    static = {name for name in dir(tf.data.Dataset) if not name.startswith("_")
              and isinstance(inspect.getattr_static(tf.data.Dataset, name), (staticmethod, classmethod))}
    assert tensorflow.DATASET_FACTORIES == static


def test_graph_runs_take_the_session_where_the_analysis_reads_it() -> None:
    import inspect

    with tf.Graph().as_default():
        graph_tensor = tf.compat.v1.placeholder(tf.float32)
    index, name = tensorflow.GRAPH_RUN_SESSION
    methods = [getattr(cls, method) for cls in (type(graph_tensor), type(graph_tensor.op))
               for method in tensorflow.GRAPH_RUNS if hasattr(cls, method)]
    assert {m.__name__ for m in methods} == tensorflow.GRAPH_RUNS
    for method in methods:
        assert list(inspect.signature(method).parameters)[1 + index] == name, method


def test_eager_ops_are_tensorflows_own_op_functions() -> None:
    """Every top-level name the analysis takes for an eager op carries TensorFlow's dispatch
    support (its mark of a function that runs an op on tensors), or creates a tensor or variable;
    every function of the op namespaces is defined in TensorFlow's op modules."""
    import inspect

    creators = {"constant", "Variable", "convert_to_tensor"}
    v1_only = {"random_normal", "random_uniform", "truncated_normal"}  # tf.compat.v1 ops
    for op in sorted(tensorflow.TOP_LEVEL_OPS - creators):
        function = getattr(tf.compat.v1 if op in v1_only else tf, op)
        assert hasattr(function, "_tf_fallback_dispatchers"), f"tf.{op} is not an op function"
    for namespace in sorted(tensorflow.EAGER_OP_NAMESPACES):
        module = getattr(tf, namespace)
        for attribute in dir(module):
            value = getattr(module, attribute)
            if attribute.startswith("_") or inspect.isclass(value) or inspect.ismodule(value) or not callable(value):
                continue
            if f"{namespace}.{attribute}".startswith(tuple(tensorflow.NOT_OPS)):
                continue
            defined_in = inspect.unwrap(value).__module__ or ""
            op_module = any(part == "ops" or part.endswith("_ops") for part in defined_in.split("."))
            assert defined_in.startswith("tensorflow.python.") and op_module, \
                f"tf.{namespace}.{attribute}: {defined_in}"


DATASET_PROGRAM = r"""
import os, sys
import numpy as np
import tensorflow as tf

tmp = sys.argv[1]
open(os.path.join(tmp, "a.txt"), "w").write("x\ny\n")
open(os.path.join(tmp, "a.bin"), "wb").write(b"abcdabcd")
open(os.path.join(tmp, "a.csv"), "w").write("a,b\n1,2\n")
with tf.io.TFRecordWriter(os.path.join(tmp, "a.tfrecord")) as writer:
    writer.write(b"abc")
D = tf.data.Dataset
CALLS = {
    "Dataset.from_tensor_slices": lambda: D.from_tensor_slices(np.ones((4, 3), np.float32)),
    "Dataset.from_tensors": lambda: D.from_tensors(np.ones((4, 3), np.float32)),
    "Dataset.from_generator": lambda: D.from_generator(lambda: iter([1]), output_signature=tf.TensorSpec((), tf.int32)),
    "Dataset.range": lambda: D.range(10),
    "Dataset.zip": lambda: D.zip((D.range(3), D.range(3))),
    "Dataset.list_files": lambda: D.list_files(os.path.join(tmp, "*.txt"), shuffle=False),
    "Dataset.choose_from_datasets": lambda: D.choose_from_datasets([D.range(3)], D.range(1)),
    "Dataset.sample_from_datasets": lambda: D.sample_from_datasets([D.range(3)]),
    "Dataset.counter": lambda: D.counter(),
    "Dataset.random": lambda: D.random(seed=1),
    "Dataset.load": lambda: D.load(os.path.join(tmp, "saved")),
    "TFRecordDataset": lambda: tf.data.TFRecordDataset(os.path.join(tmp, "a.tfrecord")),
    "TextLineDataset": lambda: tf.data.TextLineDataset(os.path.join(tmp, "a.txt")),
    "FixedLengthRecordDataset": lambda: tf.data.FixedLengthRecordDataset(os.path.join(tmp, "a.bin"), 4),
    "experimental.make_csv_dataset": lambda: tf.data.experimental.make_csv_dataset(
        os.path.join(tmp, "a.csv"), 1, num_epochs=1),
    "experimental.make_batched_features_dataset": lambda: tf.data.experimental.make_batched_features_dataset(
        os.path.join(tmp, "a.tfrecord"), 1, {"a": tf.io.FixedLenFeature([], tf.int64)}, num_epochs=1),
}


def in_child(call):
    # A child forked after the import alone: a fresh runtime (measured: import-only fork is safe).
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            call()
            tf.config.threading.set_inter_op_parallelism_threads(3)
            answer = b"not started"
        except RuntimeError as exc:
            answer = b"started" if b"cannot be modified after initialization" in str(exc).encode() else b"error"
        except Exception:
            answer = b"error"
        os.write(write, answer)
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    return os.read(read, 100).decode()


in_child(lambda: D.range(3).save(os.path.join(tmp, "saved")))
for name, call in CALLS.items():
    print(name, in_child(call), sep="	")
"""


def test_dataset_constructors_start_the_runtime_as_the_knowledge_says(tmp_path) -> None:
    """Measured: each tf.data constructor, called in a child that only imported TensorFlow, then a
    thread setting. The knowledge names every constructor that starts the runtime, and no other."""
    import processes
    import sys

    done = processes.run([sys.executable, "-c", DATASET_PROGRAM, str(tmp_path)], capture_output=True, text=True,
                         timeout=600)
    measured = dict(line.split("\t") for line in done.stdout.splitlines() if "\t" in line)
    assert len(measured) == 16 and "error" not in measured.values(), (measured, done.stderr[-2000:])
    starting = {f"tensorflow.data.{name}" for name, answer in measured.items() if answer == "started"}
    assert starting == tensorflow.DATASETS_STARTING_RUNTIME


ENGINE_NAMES = sorted(
    set(knowledge.ENGINE_FACTORIES) | set(knowledge.ENGINE_OBJECT_CLASSES.values())
    | {knowledge.RAY_REMOTE, knowledge.RAY_PUT}
    | knowledge.DASK_DELAYED | knowledge.DASK_LOCAL_CLUSTERS | knowledge.DASK_CLIENTS | knowledge.DASK_WORKER_PLUGINS
    | knowledge.DASK_GET_WORKER
    | knowledge.SPARK_ROW_UDFS | knowledge.SPARK_PANDAS_UDFS | knowledge.SPARK_PREDICT_BATCH_UDFS
    | knowledge.ITERATOR_TYPES
    | {f"pyspark.sql.functions.PandasUDFType.SCALAR{suffix}" for suffix in knowledge.SPARK_ITERATOR_UDF_TYPES}
)


@pytest.mark.parametrize("name", ENGINE_NAMES)
def test_every_engine_name_exists(name: str) -> None:
    assert resolve(name) is not None


ENGINE_MEMBERS = sorted(
    {key for key in knowledge.ENGINE_TASK_METHODS} | set(knowledge.ENGINE_SENDS)
    | {key for key in knowledge.ENGINE_PRODUCES if key[1] != "*"}
    | {("dask.client", name) for name in knowledge.DASK_INITIALIZERS if name != "register_worker_plugin"}
    | set(knowledge.SPARK_CONFIG_SETTERS)
)


@pytest.mark.parametrize("kind, member", ENGINE_MEMBERS)
def test_engine_objects_have_the_methods_the_analysis_reads(kind: str, member: str) -> None:
    """`rdd.mapPartitions`, `client.scatter`, `SparkSession.sparkContext`, ...: each on its class."""
    cls = resolve(knowledge.ENGINE_OBJECT_CLASSES[kind])
    assert hasattr(cls, member), f"{knowledge.ENGINE_OBJECT_CLASSES[kind]} has no {member}"


def test_dask_cluster_options_are_real_parameters() -> None:
    """TFP202 reads `processes=` on a LocalCluster (or a Client that makes one) and `address=` on a Client."""
    import inspect

    for name in knowledge.DASK_LOCAL_CLUSTERS:
        assert knowledge.DASK_CLUSTER_THREADS_OPTION in inspect.signature(resolve(name)).parameters, name
    for name in knowledge.DASK_CLIENTS:
        parameters = list(inspect.signature(resolve(name)).parameters)
        assert parameters[0] == knowledge.DASK_CLIENT_ADDRESS_OPTION, name  # the first positional argument


def test_ray_remote_functions_have_remote_and_options() -> None:
    ray = pytest.importorskip("ray")
    task = ray.remote(lambda: None)
    assert hasattr(task, knowledge.RAY_SUBMIT) and hasattr(task, knowledge.RAY_OPTIONS)


@pytest.mark.parametrize("name", sorted(knowledge.ENGINE_ANNOTATIONS))
def test_engine_annotations_name_the_classes_of_their_objects(name: str) -> None:
    """`df: DataFrame` types a parameter: the annotation is the engine object's own class."""
    kind = knowledge.ENGINE_ANNOTATIONS[name]
    assert resolve(name) is resolve(knowledge.ENGINE_OBJECT_CLASSES[kind])


@pytest.mark.parametrize("member", sorted(knowledge.ENGINE_PARAMETER_MEMBERS))
def test_engine_parameter_members_are_methods_of_those_objects(member: str) -> None:
    kind = knowledge.ENGINE_PARAMETER_MEMBERS[member]
    assert hasattr(resolve(knowledge.ENGINE_OBJECT_CLASSES[kind]), member)


@pytest.mark.parametrize("module", sorted(knowledge.ENGINE_STAR_EXPORTS))
def test_engine_star_exports_are_what_a_star_import_binds(module: str) -> None:
    head = module.split(".")[0]
    if head in OPTIONAL_ROOTS and importlib.util.find_spec(head) is None:
        pytest.skip(f"{head} is not installed")
    namespace: dict = {}
    exec(f"from {module} import *", namespace)  # noqa: S102 - the installed engine's own star import
    for name in knowledge.ENGINE_STAR_EXPORTS[module]:
        assert name in namespace, f"from {module} import * does not bind {name}"
        assert getattr(importlib.import_module(module), name) is namespace[name]


PRESERVING = sorted((kind, member) for kind, members in knowledge.ENGINE_PRESERVING_MEMBERS.items()
                    for member in members)


@pytest.mark.parametrize("kind, member", PRESERVING)
def test_engine_preserving_members_give_back_the_same_kind(kind: str, member: str) -> None:
    """`df.repartition(8)` is a DataFrame again: the method's own return annotation says so."""
    import inspect

    cls = resolve(knowledge.ENGINE_OBJECT_CLASSES[kind])
    returns = inspect.signature(getattr(cls, member)).return_annotation
    name = getattr(returns, "__name__", str(returns)).strip("'\"").split("[")[0]  # RDD[T] -> RDD
    assert name == cls.__name__, (kind, member, returns)
