"""What tfproc-lint knows about the libraries' APIs, as data, in one place.

Names are canonical (see names.py: `tf.compat.v1.Session` -> `tensorflow.Session`,
`tf.keras.models.load_model` -> `keras.models.load_model`, `multiprocess.Pool` ->
`multiprocessing.Pool`). tests/test_api_knowledge.py checks every TensorFlow, Keras and process
name below against the installed libraries, so a renamed or removed API shows up as a failing
test rather than as a silent miss. The analysis modules read these tables; they hold no word
lists of their own.
"""

from __future__ import annotations

from tfproc_lint.analysis.kinds import Kind
# The engines' knowledge lives in tfproc_lint/knowledge/engines.py (shared with the guard); re-exported
# here for the modules that still read it through api.
from tfproc_lint.knowledge.engines import (  # noqa: F401
    DASK_WORKER_COUNT, DASK_RESOURCES, DASK_GPU_RESOURCE, ENGINE_ROW_TASKS, ENGINE_PARTITION_TASKS,
    ENGINE_UDF_ROW_TASKS, ENGINE_ONE_TASKS, ENGINE_BATCH_TASKS, DASK_WORKER_PLUGINS, DASK_PLUGIN_SETUP,
    DASK_GET_WORKER, ENGINES, ENGINE_PACKAGES, ENGINE_SERIALIZATION_ERRORS, ENGINE_CAPTURE_ERRORS, RAY_REMOTE,
    RAY_SUBMIT, RAY_OPTIONS, RAY_PUT, RAY_GPU_OPTION, RAY_TF_CHECKPOINT_CLASSES, RAY_TF_CHECKPOINT_MAKERS,
    RAY_TF_CHECKPOINT_MODEL_LOADS, RAY_SERVE_DEPLOYMENTS, RAY_SERVE_ONCE_METHODS, RAY_SERVE_CACHED,
    ENGINE_FACTORIES, ENGINE_OBJECT_CLASSES, ENGINE_PRODUCES, ENGINE_TASK_METHODS, ENGINE_SENDS, ENGINE_ANNOTATIONS,
    ENGINE_PARAMETER_MEMBERS, ENGINE_PRESERVING_MEMBERS, ENGINE_STAR_EXPORTS, DASK_LOCAL_CLUSTERS, DASK_CLIENTS,
    DASK_CLUSTER_THREADS_OPTION, DASK_CLIENT_ADDRESS_OPTION, DASK_SCHEDULER_ADDRESS_STRINGS,
    DASK_SCHEDULER_ADDRESS_KEYWORD, DASK_INITIALIZERS, DASK_DELAYED, DASK_KERAS_BROKEN_SENDS, SPARK_ROW_UDFS,
    SPARK_PANDAS_UDFS, SPARK_PREDICT_BATCH_UDFS, SPARK_UDF_REGISTRATIONS, SPARK_CONFIG_SETTERS,
    SPARK_TASK_GPU_AMOUNT, SPARK_EXECUTOR_ENVIRONMENT, SPARK_PANDAS_UDF_TYPES, SPARK_ITERATOR_UDF_TYPES,
    ITERATOR_TYPES,
)

# --- TensorFlow runtime state: constructors and loaders -------------------------------------------
STATE_CONSTRUCTORS: dict[str, Kind] = {
    "tensorflow.Session": Kind.SESSION,
    "tensorflow.InteractiveSession": Kind.SESSION,
    "tensorflow.train.MonitoredSession": Kind.SESSION,
    "tensorflow.train.MonitoredTrainingSession": Kind.SESSION,
    "tensorflow.train.SingularMonitoredSession": Kind.SESSION,
    "keras.backend.get_session": Kind.SESSION,
    "tensorflow.Graph": Kind.GRAPH,
    "tensorflow.get_default_graph": Kind.GRAPH,
    "tensorflow.placeholder": Kind.GRAPH,
    "tensorflow.placeholder_with_default": Kind.GRAPH,
    "tensorflow.train.Saver": Kind.GRAPH,
    "tensorflow.train.import_meta_graph": Kind.GRAPH,
    # TF1 input pipelines: graph state too (queues, their runners, graph iterators).
    "tensorflow.FIFOQueue": Kind.GRAPH,
    "tensorflow.RandomShuffleQueue": Kind.GRAPH,
    "tensorflow.PaddingFIFOQueue": Kind.GRAPH,
    "tensorflow.PriorityQueue": Kind.GRAPH,
    "tensorflow.queue.FIFOQueue": Kind.GRAPH,
    "tensorflow.queue.RandomShuffleQueue": Kind.GRAPH,
    "tensorflow.queue.PaddingFIFOQueue": Kind.GRAPH,
    "tensorflow.queue.PriorityQueue": Kind.GRAPH,
    "tensorflow.train.QueueRunner": Kind.GRAPH,
    "tensorflow.data.make_one_shot_iterator": Kind.GRAPH,
    "tensorflow.data.make_initializable_iterator": Kind.GRAPH,
    "tensorflow.get_variable": Kind.GRAPH,
    "tensorflow.function": Kind.TF_FUNCTION,
    "tensorflow.saved_model.load": Kind.SAVED_MODEL,
    "tensorflow_hub.load": Kind.SAVED_MODEL,
    "keras.models.load_model": Kind.KERAS_MODEL,
    "keras.saving.load_model": Kind.KERAS_MODEL,
    "keras.saving.saving_lib.load_model": Kind.KERAS_MODEL,
    "keras.Sequential": Kind.KERAS_MODEL,
    "keras.models.Sequential": Kind.KERAS_MODEL,
    "keras.Model": Kind.KERAS_MODEL,
    "keras.models.Model": Kind.KERAS_MODEL,
    "keras.models.clone_model": Kind.KERAS_MODEL,
    "keras.models.model_from_json": Kind.KERAS_MODEL,
    "keras.models.model_from_config": Kind.KERAS_MODEL,
    "keras.models.model_from_yaml": Kind.KERAS_MODEL,
    "tensorflow_datasets.load": Kind.DATASET,
    "tensorflow.data.TFRecordDataset": Kind.DATASET,
    "tensorflow.data.TextLineDataset": Kind.DATASET,
    "tensorflow.data.FixedLengthRecordDataset": Kind.DATASET,
    "tensorflow.data.experimental.make_csv_dataset": Kind.DATASET,
    "tensorflow.data.experimental.make_batched_features_dataset": Kind.DATASET,
    "tensorflow.estimator.Estimator": Kind.ESTIMATOR,
    # Ray AIR's predictor (early Ray 2 releases; not in Ray 2.60: REMOVED_NAMES) builds the model
    # (`model_definition()`) and loads the checkpoint's weights into it.
    "ray.train.tensorflow.TensorflowPredictor.from_checkpoint": Kind.KERAS_MODEL,
}
# Names of old releases, still found in real code, that the installed versions no longer have.
REMOVED_NAMES = frozenset({
    "tensorflow.estimator.Estimator",  # removed in TensorFlow 2.16
    "keras.models.model_from_yaml", "keras.models.model_from_config", "keras.backend.get_session",
    "keras.utils.data_utils.Sequence", "tensorflow.contrib.",
    "keras.utils.multi_gpu_model",  # removed in TensorFlow 2.4
    "ray.train.tensorflow.TensorflowPredictor.from_checkpoint",  # Ray AIR's predictors: not in Ray 2.60
})

# In graph mode a variable is a graph node: graph state, not an eager resource.
GRAPH_MODE_STATE: dict[str, Kind] = {"tensorflow.Variable": Kind.GRAPH}

# Local classes deriving from these are instances of that kind.
STATE_BASES: dict[str, Kind] = {
    "keras.Model": Kind.KERAS_MODEL,
    "keras.models.Model": Kind.KERAS_MODEL,
    "keras.Sequential": Kind.KERAS_MODEL,
    "keras.models.Sequential": Kind.KERAS_MODEL,
}

DATASET_METHODS = frozenset(
    "batch padded_batch map flat_map filter shuffle repeat prefetch cache take skip shard zip "
    "concatenate interleave unbatch window apply with_options rebatch enumerate ragged_batch "
    "bucket_by_sequence_length group_by_window scan unique".split()
)
DATASET_FACTORIES = frozenset(
    "from_tensor_slices from_tensors from_generator range zip list_files load choose_from_datasets "
    "sample_from_datasets counter random".split()
)
DATASET_ITERATOR_METHODS = frozenset({"make_one_shot_iterator", "make_initializable_iterator"})
GRAPH_LOOKUPS = frozenset({"get_tensor_by_name", "get_operation_by_name"})
# tf.data constructors that start the runtime in eager mode: they convert their inputs to tensors
# at once (measured with TensorFlow 2.21: each one, called in a fresh process, makes a later
# `set_inter_op_parallelism_threads` raise, and a fork pool after it hangs; tests/test_api_knowledge.py
# measures them again). In graph mode from_tensor_slices, range, zip, ... only add graph nodes.
DATASETS_STARTING_RUNTIME = frozenset({
    *(f"tensorflow.data.Dataset.{factory}" for factory in DATASET_FACTORIES),
    "tensorflow.data.TFRecordDataset", "tensorflow.data.TextLineDataset", "tensorflow.data.FixedLengthRecordDataset",
    "tensorflow.data.experimental.make_csv_dataset", "tensorflow.data.experimental.make_batched_features_dataset",
})

# --- What starts TensorFlow's runtime (its process-wide thread pools) ------------------------------
# tf.<namespace>.<function> that run ops eagerly (lower-case functions; classes are not ops).
EAGER_OP_NAMESPACES = frozenset(
    "math linalg nn random image signal strings sparse raw_ops bitwise ragged audio".split()
)
NOT_OPS = frozenset({"random.set_seed", "random.get_global_generator", "random.experimental"})
TOP_LEVEL_OPS = frozenset(
    """constant Variable convert_to_tensor matmul add subtract multiply divide add_n zeros ones
    fill range reshape cast concat stack unstack split tile pad gather gather_nd scatter_nd where
    reduce_sum reduce_mean reduce_max reduce_min reduce_prod reduce_any reduce_all einsum tensordot
    transpose square sqrt exp abs norm one_hot argmax argmin eye zeros_like ones_like expand_dims
    squeeze identity sort argsort maximum minimum clip_by_value clip_by_norm boolean_mask cumsum
    sigmoid tanh print random_normal random_uniform truncated_normal linspace meshgrid""".split()
)
# Queries that create the devices, and with them the runtime (measured: a fork pool after them
# hangs); `tf.config.list_physical_devices` does not (measured: works).
RUNTIME_QUERIES = frozenset({
    "tensorflow.python.client.device_lib.list_local_devices",
    "tensorflow.test.is_gpu_available",
    "tensorflow.test.gpu_device_name",
    "tensorflow.config.list_logical_devices",
    "tensorflow.config.experimental.list_logical_devices",
})
# tf.distribute strategies create their devices, and with them the runtime (measured: a fork pool
# after MirroredStrategy() or OneDeviceStrategy("/cpu:0") hangs).
RUNTIME_STRATEGIES = frozenset({"tensorflow.distribute.MirroredStrategy", "tensorflow.distribute.OneDeviceStrategy"})
# Pool calls whose results reach the parent before they return: a task that returns a tf.Tensor
# makes the parent run an op when it unpickles the result (measured: a later fork pool hangs).
SYNCHRONOUS_POOL_CALLS = frozenset({"map", "starmap", "apply"})
MODEL_RUNS = frozenset(
    "predict fit evaluate predict_on_batch train_on_batch test_on_batch build predict_step "
    "fit_generator predict_generator evaluate_generator".split()
)
SESSION_RUNS = frozenset({"run", "partial_run"})
ESTIMATOR_RUNS = frozenset({"train", "evaluate", "predict", "export_saved_model", "export_savedmodel"})
ESTIMATOR_SUFFIXES = ("Estimator", "Classifier", "Regressor")  # tf.estimator.DNNClassifier, ...
# A task that trains what it builds: building per task is the work itself (TFP301).
TRAINING_METHODS = frozenset({"fit", "fit_generator", "train_on_batch", "minimize", "apply_gradients"})
# Keras constructors that create weights at once when given arguments.
KERAS_BUILDS_AT_ONCE = frozenset({
    "keras.models.load_model", "keras.saving.load_model", "keras.saving.saving_lib.load_model",
    "keras.models.clone_model",
    "keras.models.model_from_json", "keras.models.model_from_config", "keras.Model", "keras.models.Model",
})
KERAS_SEQUENTIAL = frozenset({"keras.Sequential", "keras.models.Sequential"})
KERAS_APPLICATIONS = "keras.applications."

# --- TensorFlow 1 graph mode ------------------------------------------------------------------------
# Calling one of these makes every later op of the process build graph nodes instead of running.
GRAPH_MODE_SWITCHES = frozenset({"tensorflow.disable_eager_execution", "tensorflow.disable_v2_behavior"})
# The TF1 API: code written against it runs in graph mode (TF1's default, and these raise under
# TF2's eager execution). Canonical names; `tf.contrib` is matched as a prefix.
TF1_GRAPH_API = frozenset({
    "tensorflow.placeholder", "tensorflow.placeholder_with_default", "tensorflow.get_variable",
    "tensorflow.variable_scope", "tensorflow.global_variables_initializer",
    "tensorflow.initialize_all_variables", "tensorflow.local_variables_initializer",
    "tensorflow.train.start_queue_runners",
})
TF1_ONLY_PREFIXES = ("tensorflow.contrib.",)
# Spelled without `compat.v1` (raw import path), these exist only in TensorFlow 1.x.
TF1_ONLY_SPELLINGS = frozenset({"tensorflow.Session", "tensorflow.InteractiveSession", "tensorflow.placeholder"})

# TF1 graph building: the process's first tf.Graph (made by these calls, or by the first op, Variable or
# placeholder in graph mode) starts a thread of TensorFlow's (`tf_graph_runner`) that a forked child does not
# get; a fork after it whose children run a session can hang, rarely (runtime_probe/fork_hazard.py, TFP201).
GRAPH_BUILDERS = frozenset({
    "tensorflow.Graph", "tensorflow.get_default_graph", "tensorflow.placeholder",
    "tensorflow.placeholder_with_default", "tensorflow.train.import_meta_graph",
})
# ... and these only in graph mode (in eager mode they run ops, which starts the runtime itself).
GRAPH_MODE_BUILDERS = frozenset({"tensorflow.Variable", "tensorflow.get_variable", "tensorflow.train.Saver"})

# TF1: methods of graph objects that run their graph in a session, like `sess.run` (and so start
# the runtime): `Tensor.eval(feed_dict=None, session=None)`, `Variable.eval(session=None)`,
# `Operation.run(feed_dict=None, session=None)`. The session is the default one or `session=`.
GRAPH_RUNS = frozenset({"eval", "run"})
GRAPH_RUN_SESSION = (1, "session")  # where `tensor.eval` and `op.run` take their session

# --- Settings read once, when the runtime starts (TFP401, TFP402, TFP403) ----------------------------
# Each raises RuntimeError when called with a new value after the runtime started (the same value
# again is accepted: tensorflow/python/eager/context.py); the text is TensorFlow's.
RUNTIME_CONFIGURATION: dict[str, str] = {
    "tensorflow.config.threading.set_inter_op_parallelism_threads":
        "Inter op parallelism cannot be modified after initialization",
    "tensorflow.config.threading.set_intra_op_parallelism_threads":
        "Intra op parallelism cannot be modified after initialization",
    "tensorflow.config.set_logical_device_configuration": "Virtual devices cannot be modified after being initialized",
    "tensorflow.config.experimental.set_virtual_device_configuration":
        "Virtual devices cannot be modified after being initialized",
    "tensorflow.config.experimental.set_memory_growth": "Physical devices cannot be modified after being initialized",
    "tensorflow.config.set_visible_devices": "Visible devices cannot be modified after being initialized",
    "tensorflow.config.experimental.set_visible_devices": "Visible devices cannot be modified after being initialized",
}
# Of those, the ones that only do something where TensorFlow sees a GPU (on a CPU-only machine the
# code around them finds no GPU to configure, or the visible list does not change).
GPU_ONLY_CONFIGURATION = frozenset({
    "tensorflow.config.experimental.set_memory_growth",
    "tensorflow.config.set_visible_devices",
    "tensorflow.config.experimental.set_visible_devices",
})
# Environment variables the runtime reads once (CUDA's device list at CUDA initialisation, the
# allocator and the thread pools when the runtime starts): what each does when set too late.
RUNTIME_ENVIRONMENT: dict[str, str] = {
    "CUDA_VISIBLE_DEVICES": "CUDA has enumerated the GPUs already, so the process keeps every GPU it saw "
                            "(workers meant to get one GPU each all land on the same ones)",
    "TF_FORCE_GPU_ALLOW_GROWTH": "the GPU allocator exists already, so memory growth stays off",
    "TF_GPU_ALLOCATOR": "the GPU allocator exists already, so the setting does nothing",
    "TF_NUM_INTEROP_THREADS": "the thread pools exist already, so the limit does nothing",
    "TF_NUM_INTRAOP_THREADS": "the thread pools exist already, so the limit does nothing",
}
ENVIRON = "os.environ"
ENVIRON_SETTERS = frozenset({"update", "setdefault", "__setitem__"})
PUTENV = "os.putenv"

# --- GPUs (TFP401) ----------------------------------------------------------------------------------
# A process that does one of these does not map all GPU memory (or sees no GPU, or one of its own).
GPU_MEMORY_LIMITS = frozenset({
    "tensorflow.config.experimental.set_memory_growth",
    "tensorflow.config.set_logical_device_configuration",
    "tensorflow.config.experimental.set_virtual_device_configuration",
    "tensorflow.config.set_visible_devices",
    "tensorflow.config.experimental.set_visible_devices",
    "tensorflow.GPUOptions",
})
GPU_MEMORY_ENVIRONMENT = frozenset({"CUDA_VISIBLE_DEVICES", "TF_FORCE_GPU_ALLOW_GROWTH", "TF_GPU_ALLOCATOR"})
# TF1 `GPUOptions` fields, also set as attributes (`config.gpu_options.allow_growth = True`).
GPU_MEMORY_OPTIONS = frozenset({"allow_growth", "per_process_gpu_memory_fraction", "visible_device_list"})
TF1_GPU_OPTIONS = frozenset({"tensorflow.GPUOptions"})
TF1_DEVICE_COUNT = "device_count"  # ConfigProto(device_count={"GPU": 0}): a session with no GPU device
# Names whose mention (a runtime_env's env_vars, a launcher) may hide or limit the GPUs of engine
# workers: TFP401's engine checks stay silent. RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO=1 makes Ray give
# zero-GPU workers an empty CUDA_VISIBLE_DEVICES (by default, Ray 2.60 leaves the node's: measured).
GPU_HIDING_VARIABLES = (*sorted(GPU_MEMORY_ENVIRONMENT), "RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO")
# Calls that show the code means to use a GPU (besides GPU device strings such as "/GPU:0").
GPU_QUERIES = frozenset({
    "tensorflow.test.is_gpu_available",
    "tensorflow.test.gpu_device_name",
    "tensorflow.test.is_built_with_cuda",
    "tensorflow.test.is_built_with_gpu_support",
    "keras.utils.multi_gpu_model",
})
# Project dependencies on a GPU build of TensorFlow (config.py reads them).
GPU_DISTRIBUTIONS = ("tensorflow-gpu", "tensorflow[and-cuda]", "tf-nightly-gpu", "tf-nightly[and-cuda]")
# The memory-growth fix calls these.
LIST_PHYSICAL_DEVICES = "tensorflow.config.list_physical_devices"
SET_MEMORY_GROWTH = "tensorflow.config.experimental.set_memory_growth"

# --- Processes -------------------------------------------------------------------------------------
PROCESS_CONSTRUCTORS: dict[str, Kind] = {
    "multiprocessing.Pool": Kind.POOL,
    "multiprocessing.Process": Kind.PROCESS,
    "multiprocessing.get_context": Kind.CONTEXT,
    "multiprocessing.Queue": Kind.QUEUE,
    "multiprocessing.SimpleQueue": Kind.QUEUE,
    "multiprocessing.JoinableQueue": Kind.QUEUE,
    "multiprocessing.Pipe": Kind.PIPE_PAIR,
    "multiprocessing.Manager": Kind.MANAGER,
    "multiprocessing.SyncManager": Kind.MANAGER,
    "concurrent.futures.ProcessPoolExecutor": Kind.EXECUTOR,
    "loky.ProcessPoolExecutor": Kind.EXECUTOR,
    "loky.get_reusable_executor": Kind.EXECUTOR,
    "joblib.Parallel": Kind.PARALLEL,
    "pathos.multiprocessing.ProcessPool": Kind.POOL,
    # Process classes of one start method (multiprocessing.context, not exported at the top).
    "multiprocessing.ForkProcess": Kind.PROCESS,
    "multiprocessing.SpawnProcess": Kind.PROCESS,
    "multiprocessing.ForkServerProcess": Kind.PROCESS,
    "concurrent.futures.ThreadPoolExecutor": Kind.THREADS,
    "multiprocessing.ThreadPool": Kind.THREADS,
    "threading.Thread": Kind.THREADS,
    "pathos.serial.SerialPool": Kind.THREADS,  # runs every task in the calling process
}
THREAD_PREFIXES = ("multiprocessing.dummy.", "pathos.threading.")
PROCESS_CLASS_START_METHODS = {
    "multiprocessing.ForkProcess": "fork",
    "multiprocessing.SpawnProcess": "spawn",
    "multiprocessing.ForkServerProcess": "forkserver",
}
# Names a process library exports for a class that lives elsewhere (`pathos.multiprocessing.Pool`
# is `multiprocess.pool.Pool`, not pathos's own ProcessPool); names.canonical() follows them, then
# its prefixes. tests/test_api_knowledge.py checks that each pair names one object, and that
# every public pool, process and executor class of the supported libraries is covered.
PROCESS_ALIASES = {
    "pathos.multiprocessing.Pool": "multiprocess.pool.Pool",
    "pathos.helpers.ProcessPool": "multiprocess.pool.Pool",
    "pathos.pools._ProcessPool": "multiprocess.pool.Pool",
    "pathos.multiprocessing.ThreadPool": "multiprocess.dummy.Pool",
    "pathos.helpers.ThreadPool": "multiprocess.dummy.Pool",
    "pathos.pools._ThreadPool": "multiprocess.dummy.Pool",
    "pathos.multiprocessing.ProcessingPool": "pathos.multiprocessing.ProcessPool",
    "pathos.pools.ProcessPool": "pathos.multiprocessing.ProcessPool",
    "pathos.multiprocessing.ThreadingPool": "pathos.threading.ThreadPool",
    "pathos.pools.ThreadPool": "pathos.threading.ThreadPool",
    "pathos.pools.SerialPool": "pathos.serial.SerialPool",
    "pathos.serial.PythonSerial": "pathos.serial.SerialPool",
    "pathos.python.SerialPool": "pathos.serial.SerialPool",
    "pathos.pools.ParallelPool": "pathos.parallel.ParallelPool",
    "pathos.parallel.ParallelPythonPool": "pathos.parallel.ParallelPool",
    "joblib.parallel.Parallel": "joblib.Parallel",
}
# joblib ships loky inside it: the same API under another package name.
PROCESS_PREFIX_ALIASES = (("joblib.externals.loky.", "loky."),)
PROCESS_BASES: dict[str, Kind] = {
    "multiprocessing.Process": Kind.PROCESS,
    "multiprocessing.Pool": Kind.POOL,
    "concurrent.futures.ProcessPoolExecutor": Kind.EXECUTOR,
    "concurrent.futures.ThreadPoolExecutor": Kind.THREADS,
    "multiprocessing.ThreadPool": Kind.THREADS,
    "threading.Thread": Kind.THREADS,
}
# Context classes (`class C(multiprocessing.context.ForkContext)`) and their start methods.
CONTEXT_CLASSES = {
    "multiprocessing.ForkContext": "fork",
    "multiprocessing.SpawnContext": "spawn",
    "multiprocessing.ForkServerContext": "forkserver",
    "multiprocessing.DefaultContext": "default",
}
CONTEXT_METHODS: dict[str, Kind] = {
    "Pool": Kind.POOL,
    "Process": Kind.PROCESS,
    "Queue": Kind.QUEUE,
    "SimpleQueue": Kind.QUEUE,
    "JoinableQueue": Kind.QUEUE,
    "Pipe": Kind.PIPE_PAIR,
    "Manager": Kind.MANAGER,
}
MANAGER_QUEUES = frozenset({"Queue", "JoinableQueue"})
# Methods of Manager proxies that send their argument to the manager process (pickled).
PROXY_SENDING_METHODS = frozenset({"append", "extend", "insert", "update", "setdefault", "__setitem__", "set"})
SET_START_METHOD = "multiprocessing.set_start_method"
GET_CONTEXT = "multiprocessing.get_context"
GET_START_METHOD = "multiprocessing.get_start_method"
# Calls on the default context that fix its start method: a later `set_start_method()` without
# `force=True` raises `RuntimeError: context has already been set` (measured here). So do
# `get_context()` without a method, `get_start_method()` without `allow_none=True`, a default
# `Process.start()` and a `ProcessPoolExecutor` without `mp_context`; `get_context("spawn")`,
# `Pipe()` and a `Process` that is only constructed do not.
CONTEXT_FIXING_CALLS = frozenset({
    "multiprocessing.Pool", "multiprocessing.Queue", "multiprocessing.SimpleQueue", "multiprocessing.JoinableQueue",
    "multiprocessing.Manager", "multiprocessing.Lock", "multiprocessing.RLock", "multiprocessing.Semaphore",
    "multiprocessing.BoundedSemaphore", "multiprocessing.Condition", "multiprocessing.Event",
    "multiprocessing.Barrier", "multiprocessing.Value", "multiprocessing.Array", "multiprocessing.set_start_method",
})
FORK_CALLS = frozenset({"os.fork", "os.forkpty"})
# Library pools that pickle with dill (lambdas and closures travel) or cloudpickle.
DILL_POOL_MODULES = ("multiprocess.", "pathos.")
# joblib backends that start no process.
JOBLIB_IN_PROCESS_BACKENDS = frozenset({"threading", "sequential", "dask"})
# Keras data workers: `use_multiprocessing=True` with `workers=N` starts processes.
KERAS_WORKER_METHODS = frozenset({"fit", "fit_generator", "predict", "predict_generator", "evaluate",
                                  "evaluate_generator"})
KERAS_DATASET_BASES = frozenset({"keras.utils.PyDataset", "keras.utils.Sequence", "keras.utils.data_utils.Sequence"})

# --- Pool sizes (TFP302) ---------------------------------------------------------------------------
# Where a pool takes its worker count (position, keyword); absent or None means one worker per CPU.
POOL_SIZE_ARGUMENTS: dict[str, tuple[int, str]] = {
    "multiprocessing.Pool": (0, "processes"),
    "concurrent.futures.ProcessPoolExecutor": (0, "max_workers"),
    "loky.ProcessPoolExecutor": (0, "max_workers"),
    "loky.get_reusable_executor": (0, "max_workers"),
}
CPU_COUNT_CALLS = frozenset({"os.cpu_count", "multiprocessing.cpu_count", "joblib.cpu_count", "psutil.cpu_count"})

# --- One item as a batch of one (TFP303) ------------------------------------------------------------
# Model methods that run the model on the batch given as their first argument.
MODEL_BATCH_METHODS = frozenset({"predict", "predict_on_batch"})
# `np.expand_dims(x, 0)`; `x[np.newaxis]` (newaxis is None: read by name); `np.array([x])`.
EXPAND_DIMS = frozenset({"numpy.expand_dims", "tensorflow.expand_dims"})
NEW_AXIS = frozenset({"numpy.newaxis", "tensorflow.newaxis"})
ARRAYS_FROM_LISTS = frozenset({"numpy.array", "numpy.asarray", "numpy.stack", "numpy.vstack", "tensorflow.constant",
                               "tensorflow.convert_to_tensor", "tensorflow.stack"})
# Conversions that leave an item an in-memory row (dtype, shape, copy). Anything else between the
# task's argument and the model (reading a file, decoding an image) makes each task more than a row.
ROW_CONVERSIONS = frozenset({"numpy.asarray", "numpy.array", "numpy.float32", "numpy.ravel", "numpy.reshape",
                             "tensorflow.cast", "tensorflow.constant", "tensorflow.convert_to_tensor",
                             "tensorflow.reshape"})
ROW_METHODS = frozenset({"astype", "reshape", "flatten", "ravel", "copy", "squeeze"})
# Builtins that keep the elements of what they are given: `for i, row in enumerate(rows)` still
# walks the partition's rows (TFP303's loop over rows inside an engine task). Builtins by their bare
# name, taken only where the module does not bind it.
ROW_ITERATIONS = frozenset({"enumerate", "zip", "iter", "list", "tuple"})

# --- Program exits ------------------------------------------------------------------------------------
PROCESS_EXITS = frozenset({"sys.exit", "os._exit", "os.abort", "builtins.exit", "builtins.quit"})
BUILTIN_EXITS = frozenset({"exit", "quit"})

# --- Names a fix may add ----------------------------------------------------------------------------
FIX_LOADERS = frozenset({"keras.models.load_model", "keras.saving.load_model", "tensorflow.saved_model.load",
                         "tensorflow_hub.load"})

# What `ray.get` raises for TF state a Ray task returns: Ray pickles the result in the worker, and the
# error comes back wrapped (measured, Ray 2.x, TF 2.21: a Session or Graph, a Dataset; a Keras model
# returns fine).
RAY_RETURN_ERRORS = {
    Kind.SESSION: "RayTaskError(TypeError): cannot pickle 'Graph' object",
    Kind.GRAPH: "RayTaskError(TypeError): cannot pickle 'Graph' object",
    Kind.DATASET: "RayTaskError(InvalidArgumentError): a Dataset does not pickle (its variant tensor)",
}


# Import time (the project layer's cheap look at a module, tfproc_lint/project.py): calls of these
# TensorFlow and Keras names, usual at a module's top level, neither start the runtime nor build
# state (registries, decorators, logging, the execution-mode switches); any other TensorFlow or
# Keras call there may, and then the module is analysed.
IMPORT_TIME_INERT = frozenset({
    "register_keras_serializable", "get_custom_objects", "custom_object_scope", "get_logger", "set_verbosity",
    "function", "custom_gradient", "export", "disable_eager_execution", "disable_v2_behavior",
    "enable_eager_execution", "enable_v2_behavior", "set_floatx", "set_image_data_format", "set_epsilon",
    "set_log_device_placement", "set_seed", "register_serializable", "keras_export", "tf_export",
})
