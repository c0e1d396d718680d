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
# Dask: a LocalCluster's worker count and the resources each worker advertises (the same for all:
# LocalCluster does not split the machine's GPUs among its workers, unlike dask-cuda).
DASK_WORKER_COUNT = "n_workers"
DASK_RESOURCES = "resources"
DASK_GPU_RESOURCE = "GPU"
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
# How many times an engine runs a task's callable (the crossing's "tasks") when TFP303 reads its
# parameter as one row ("per-item": rdd.map, client.map, ...) or as a stream of rows to loop over
# ("per-partition": mapPartitions, foreachPartition, mapInPandas, an iterator pandas_udf).
ENGINE_ROW_TASKS = "per-item"
ENGINE_PARTITION_TASKS = "per-partition"
# Also read as one row per call: a Spark row `udf` ("per-row"), and a task submitted once per item of
# a loop ("one": client.submit, dask.delayed, a Ray task or actor method); as batches whose rows a
# loop may walk ("per-batch": a plain pandas_udf, ray.data's map_batches).
ENGINE_UDF_ROW_TASKS = "per-row"
ENGINE_ONE_TASKS = "one"
ENGINE_BATCH_TASKS = "per-batch"
# Dask's per-worker state: a WorkerPlugin whose setup(worker) stores the model on the worker
# (`worker.model = load_model(...)`), read back in tasks through `get_worker().model`.
DASK_WORKER_PLUGINS = frozenset({"distributed.WorkerPlugin", "distributed.diagnostics.plugin.WorkerPlugin",
                                 "dask.distributed.WorkerPlugin"})
DASK_PLUGIN_SETUP = "setup"
DASK_GET_WORKER = frozenset({"distributed.get_worker", "distributed.worker.get_worker",
                             "dask.distributed.get_worker"})

# --- Program exits ------------------------------------------------------------------------------------
PROCESS_EXITS = frozenset({"sys.exit", "os._exit", "os.abort", "builtins.exit", "builtins.quit"})
BUILTIN_EXITS = frozenset({"exit", "quit"})

# --- Names a fix may add ----------------------------------------------------------------------------
FIX_LOADERS = frozenset({"keras.models.load_model", "keras.saving.load_model", "tensorflow.saved_model.load",
                         "tensorflow_hub.load"})

# === Distributed engines: Ray, Dask, Spark (analysis/engines/ reads these) ========================
# Each engine serialises functions and their arguments with cloudpickle: a function defined in the
# script is pickled by value with the globals it reads; a Keras 3 model, an EagerTensor, a
# tf.Variable and a loaded SavedModel pickle (the model at about 12 KB for a small one); a TF1
# Session or Graph, a tf.data.Dataset and a tf.function that has been called (traced) do not
# (measured: /work/shared/runtime-facts.md section 7, runtime_probe/scenarios/engine_*).
ENGINES = ("ray", "dask", "spark")
ENGINE_PACKAGES = {"ray": "ray", "dask": "dask", "distributed": "dask", "pyspark": "spark"}
# What each engine raises for an argument cloudpickle cannot serialise (its own wording, measured).
ENGINE_SERIALIZATION_ERRORS = {
    "ray": "TypeError: Could not serialize the argument",
    "dask": "TypeError: Could not serialize object",
    "spark": "PicklingError: Could not serialize object",
}
# ... and for state the task function carries (a global it reads, what a closure captures).
ENGINE_CAPTURE_ERRORS = {
    "ray": "TypeError: Could not serialize the function",
    "dask": "TypeError: Could not serialize object",
    "spark": "PicklingError: Could not serialize object",
}
# Ray: a function or class decorated with `ray.remote` (bare or called with options) is a task or
# an actor; `f.remote(...)` submits a task, `A.remote(...)` starts an actor (its constructor is
# the worker's initializer), `a.m.remote(...)` calls an actor method; `.options(...)` sits between.
RAY_REMOTE = "ray.remote"
RAY_SUBMIT = "remote"
RAY_OPTIONS = "options"
RAY_PUT = "ray.put"
RAY_GPU_OPTION = "num_gpus"
# Ray Train's TensorFlow checkpoint: `TensorflowCheckpoint.from_directory(path)` (or from_saved_model,
# from_h5, from_model) makes a checkpoint; its `get_model()` loads the Keras model from it
# (`keras.models.load_model` on the checkpoint's file), so each call is a full load.
RAY_TF_CHECKPOINT_CLASSES = ("ray.train.tensorflow.TensorflowCheckpoint",
                             "ray.train.tensorflow.tensorflow_checkpoint.TensorflowCheckpoint")
RAY_TF_CHECKPOINT_MAKERS = frozenset({"from_directory", "from_saved_model", "from_h5", "from_model"})
RAY_TF_CHECKPOINT_MODEL_LOADS = frozenset({"get_model"})
# Ray Serve: a class decorated with `@serve.deployment` (bare or with options) runs as replicas;
# its `__init__` runs once per replica, its other methods (`__call__`, FastAPI routes, methods
# called through a handle) on every request, except Serve's own hooks (config changes, periodic
# health checks) and `@serve.multiplexed` loaders, which Serve caches per model id. A decorated
# function is called on every request.
RAY_SERVE_DEPLOYMENTS = frozenset({"ray.serve.deployment"})
RAY_SERVE_ONCE_METHODS = frozenset({"__init__", "__del__", "reconfigure", "check_health"})
RAY_SERVE_CACHED = frozenset({"ray.serve.multiplexed"})
# Engine objects: what a library call returns (a client, a context, a distributed collection).
ENGINE_FACTORIES: dict[str, str] = {
    "distributed.Client": "dask.client",
    "distributed.client.Client": "dask.client",
    "dask.distributed.Client": "dask.client",
    "distributed.get_client": "dask.client",
    "dask.distributed.get_client": "dask.client",
    "dask.bag.from_sequence": "dask.bag",
    "dask.bag.read_text": "dask.bag",
    "dask.bag.from_delayed": "dask.bag",
    "dask.dataframe.from_pandas": "dask.collection",
    "dask.dataframe.read_csv": "dask.collection",
    "dask.dataframe.read_parquet": "dask.collection",
    "dask.array.from_array": "dask.array",
    "pyspark.SparkContext": "spark.context",
    "pyspark.SparkContext.getOrCreate": "spark.context",
    "pyspark.context.SparkContext": "spark.context",  # the module path scripts import it from
    "pyspark.context.SparkContext.getOrCreate": "spark.context",
    "pyspark.sql.SparkSession.builder": "spark.builder",
    "pyspark.sql.session.SparkSession.builder": "spark.builder",
    "pyspark.SparkConf": "spark.conf",
    "pyspark.conf.SparkConf": "spark.conf",
    "ray.data.range": "ray.dataset",
    "ray.data.from_items": "ray.dataset",
    "ray.data.from_numpy": "ray.dataset",
    "ray.data.from_pandas": "ray.dataset",
    "ray.data.read_parquet": "ray.dataset",
    "ray.data.read_images": "ray.dataset",
    "ray.data.read_csv": "ray.dataset",
    "ray.data.read_json": "ray.dataset",
    "ray.data.read_binary_files": "ray.dataset",
    "pyspark.sql.SparkSession.getActiveSession": "spark.session",
    "pyspark.sql.SparkSession.active": "spark.session",
    "pyspark.sql.session.SparkSession.getActiveSession": "spark.session",
    "pyspark.sql.session.SparkSession.active": "spark.session",
}
# The class each engine object is an instance of (tests/test_api_knowledge.py checks the methods).
ENGINE_OBJECT_CLASSES = {
    "dask.client": "distributed.Client",
    "dask.bag": "dask.bag.Bag",
    "dask.collection": "dask.dataframe.DataFrame",
    "dask.array": "dask.array.Array",
    "spark.context": "pyspark.SparkContext",
    "spark.session": "pyspark.sql.SparkSession",
    "spark.builder": "pyspark.sql.SparkSession.Builder",
    "spark.conf": "pyspark.SparkConf",
    "spark.rdd": "pyspark.RDD",
    "spark.dataframe": "pyspark.sql.DataFrame",
    "spark.reader": "pyspark.sql.readwriter.DataFrameReader",
    "ray.dataset": "ray.data.Dataset",
    "spark.udf": "pyspark.sql.udf.UDFRegistration",
}
# (object, method or attribute) -> the object it gives; "*" stands for any other method.
ENGINE_PRODUCES: dict[tuple[str, str], str] = {
    ("spark.builder", "getOrCreate"): "spark.session",
    ("spark.builder", "*"): "spark.builder",
    ("spark.conf", "set"): "spark.conf",
    ("spark.conf", "*"): "spark.conf",
    ("spark.session", "sparkContext"): "spark.context",
    ("spark.context", "parallelize"): "spark.rdd",
    ("spark.context", "textFile"): "spark.rdd",
    ("spark.context", "wholeTextFiles"): "spark.rdd",
    ("spark.context", "binaryFiles"): "spark.rdd",
    ("spark.context", "range"): "spark.rdd",
    ("spark.session", "createDataFrame"): "spark.dataframe",
    ("spark.session", "range"): "spark.dataframe",
    ("spark.session", "sql"): "spark.dataframe",
    ("spark.session", "table"): "spark.dataframe",
    ("spark.session", "read"): "spark.reader",  # spark.read.option(...).parquet(path)
    ("spark.session", "udf"): "spark.udf",  # spark.udf.register("name", f, returnType)
    ("spark.reader", "format"): "spark.reader",
    ("spark.reader", "option"): "spark.reader",
    ("spark.reader", "options"): "spark.reader",
    ("spark.reader", "schema"): "spark.reader",
    ("spark.reader", "*"): "spark.dataframe",
    ("spark.dataframe", "rdd"): "spark.rdd",
    ("spark.rdd", "toDF"): "spark.dataframe",
    ("spark.rdd", "*"): "spark.rdd",
    ("spark.dataframe", "*"): "spark.dataframe",
    ("ray.dataset", "*"): "ray.dataset",
    ("dask.bag", "*"): "dask.bag",
    ("dask.collection", "*"): "dask.collection",
    ("dask.array", "*"): "dask.array",
}
# (object, method) -> (index of the callable, how many tasks: "per-item" | "per-partition" |
# "per-batch" | "one"). The callable is pickled with what it captures; the other arguments cross.
ENGINE_TASK_METHODS: dict[tuple[str, str], tuple[int, str]] = {
    ("dask.client", "submit"): (0, "one"),
    ("dask.client", "map"): (0, "per-item"),
    ("dask.bag", "map"): (0, "per-item"),
    ("dask.bag", "filter"): (0, "per-item"),
    ("dask.bag", "map_partitions"): (0, "per-partition"),
    ("dask.collection", "map_partitions"): (0, "per-partition"),
    ("dask.array", "map_blocks"): (0, "per-partition"),
    ("spark.rdd", "map"): (0, "per-item"),
    ("spark.rdd", "flatMap"): (0, "per-item"),
    ("spark.rdd", "filter"): (0, "per-item"),
    ("spark.rdd", "foreach"): (0, "per-item"),
    ("spark.rdd", "mapPartitions"): (0, "per-partition"),
    ("spark.rdd", "mapPartitionsWithIndex"): (0, "per-partition"),
    ("spark.rdd", "foreachPartition"): (0, "per-partition"),
    ("spark.dataframe", "mapInPandas"): (0, "per-partition"),
    ("spark.dataframe", "mapInArrow"): (0, "per-partition"),
    ("ray.dataset", "map_batches"): (0, "per-batch"),
    ("ray.dataset", "map"): (0, "per-item"),
    ("ray.dataset", "flat_map"): (0, "per-item"),
    ("spark.udf", "register"): (1, "per-row"),
}
# Calls that send their argument to the workers (or the object store) once.
ENGINE_SENDS: dict[tuple[str, str], str] = {
    ("dask.client", "scatter"): "per-worker",
    ("spark.context", "broadcast"): "per-worker",
}
# What `ray.get` raises for TF state a Ray task returns: Ray pickles the result in the worker, and the
# error comes back wrapped (measured, Ray 2.x, TF 2.21: a Session or Graph, a Dataset; a Keras model
# returns fine).
RAY_RETURN_ERRORS = {
    Kind.SESSION: "RayTaskError(TypeError): cannot pickle 'Graph' object",
    Kind.GRAPH: "RayTaskError(TypeError): cannot pickle 'Graph' object",
    Kind.DATASET: "RayTaskError(InvalidArgumentError): a Dataset does not pickle (its variant tensor)",
}
# Engine objects received as parameters (analysis/engine_objects.py). An annotation naming one of
# these classes types the parameter:
ENGINE_ANNOTATIONS: dict[str, str] = {
    "pyspark.RDD": "spark.rdd",
    "pyspark.rdd.RDD": "spark.rdd",
    "pyspark.sql.DataFrame": "spark.dataframe",
    "pyspark.sql.dataframe.DataFrame": "spark.dataframe",
    "pyspark.SparkContext": "spark.context",
    "pyspark.context.SparkContext": "spark.context",
    "pyspark.sql.SparkSession": "spark.session",
    "pyspark.sql.session.SparkSession": "spark.session",
    "distributed.Client": "dask.client",
    "distributed.client.Client": "dask.client",
    "dask.distributed.Client": "dask.client",
    "dask.bag.Bag": "dask.bag",
    "dask.dataframe.DataFrame": "dask.collection",
    "ray.data.Dataset": "ray.dataset",
}
# ... and so does the first member taken of it in its function, in a module that imports the engine,
# when only that engine's objects have it. Left out because other objects share the name: `map`,
# `flatMap`, `filter`, `foreach` (builtins, executors, pandas), `submit`, `scatter`, `gather`, `run`,
# `compute`, `persist` (concurrent.futures executors, MPI communicators, other schedulers),
# `map_blocks` (xarray), `map_batches` (ray.data only, but also ML libraries' datasets).
ENGINE_PARAMETER_MEMBERS: dict[str, str] = {
    "mapPartitions": "spark.rdd",
    "mapPartitionsWithIndex": "spark.rdd",
    "foreachPartition": "spark.rdd",  # a DataFrame's is its RDD's
    "rdd": "spark.dataframe",
    "mapInPandas": "spark.dataframe",
    "mapInArrow": "spark.dataframe",
    "map_partitions": "dask.collection",  # a bag's too: counted as a collection, pickled only under a Client
    "register_plugin": "dask.client",
    "upload_file": "dask.client",
    "scheduler_info": "dask.client",
    "wait_for_workers": "dask.client",
}
# ... also through a name made from the parameter (`df = df.repartition(8)`, then `df.rdd`), when the
# members between give back the same kind of object: these, or the explicit ENGINE_PRODUCES entries
# (never its "*", which stands for methods of any kind).
ENGINE_PRESERVING_MEMBERS: dict[str, frozenset[str]] = {
    "spark.dataframe": frozenset({"filter", "where", "select", "selectExpr", "withColumn", "withColumnRenamed",
                                  "drop", "dropna", "fillna", "dropDuplicates", "distinct", "limit", "sample",
                                  "repartition", "coalesce", "cache", "persist", "orderBy", "sort",
                                  "sortWithinPartitions", "join", "union", "unionByName", "alias"}),
    "spark.rdd": frozenset({"filter", "repartition", "coalesce", "cache", "persist", "sample", "distinct",
                            "union", "sortBy", "sortByKey"}),
}
# Star imports of engine modules: the names the analysis reads that they bring in (`from ray import *`
# raises ImportError in Ray 2.4x: its `__all__` names the removed `workflow`).
ENGINE_STAR_EXPORTS: dict[str, frozenset[str]] = {
    "pyspark": frozenset({"SparkContext", "SparkConf"}),
    "pyspark.sql": frozenset({"SparkSession"}),
    "pyspark.sql.functions": frozenset({"udf", "pandas_udf", "PandasUDFType"}),
    "pyspark.ml.functions": frozenset({"predict_batch_udf"}),
    "dask": frozenset({"delayed"}),
    "distributed": frozenset({"Client", "LocalCluster", "get_client"}),
    "dask.distributed": frozenset({"Client", "LocalCluster", "get_client"}),
}
# Dask's local clusters: the nanny spawns each worker process, which re-imports the driver's
# `__main__`; made at import, the re-import starts the cluster again and the worker dies
# ("bootstrapping phase" RuntimeError, "Nanny failed to start"; measured). `processes=False` gives
# threads; a `Client` given a scheduler address (first argument or `address=`) starts nothing.
DASK_LOCAL_CLUSTERS = frozenset({"distributed.LocalCluster", "distributed.deploy.LocalCluster",
                                 "distributed.deploy.local.LocalCluster", "dask.distributed.LocalCluster"})
DASK_CLIENTS = frozenset({"distributed.Client", "distributed.client.Client", "dask.distributed.Client"})
DASK_CLUSTER_THREADS_OPTION = "processes"
DASK_CLIENT_ADDRESS_OPTION = "address"
# Dask's `Client()` given no address connects to the scheduler named by the `scheduler-address`
# config when one is set (distributed/client.py; the DASK_SCHEDULER_ADDRESS variable sets it). A
# module that names that setting (reads it, sets it) expects a running scheduler: its `Client()`
# starts no local cluster. Strings, and the keyword form `dask.config.set(scheduler_address=...)`.
DASK_SCHEDULER_ADDRESS_STRINGS = frozenset({"scheduler-address", "scheduler_address", "DASK_SCHEDULER_ADDRESS"})
DASK_SCHEDULER_ADDRESS_KEYWORD = "scheduler_address"
# Dask's initializers: a plugin whose setup() runs once per worker, or a function run on each.
DASK_INITIALIZERS = frozenset({"register_plugin", "register_worker_plugin", "run"})
DASK_DELAYED = frozenset({"dask.delayed", "dask.delayed.delayed"})
# Dask registers its own Keras serializer, which raises AttributeError ('_updated_config') under
# Keras 3: a Keras model scattered with `client.scatter` cannot travel (measured).
DASK_KERAS_BROKEN_SENDS = frozenset({"scatter"})
# Spark user-defined functions: a row `udf` runs once per row; a `pandas_udf` whose first
# parameter is annotated `Iterator[...]` runs once per partition's stream of batches.
SPARK_ROW_UDFS = frozenset({"pyspark.sql.functions.udf"})
SPARK_PANDAS_UDFS = frozenset({"pyspark.sql.functions.pandas_udf"})
# Spark ML's `predict_batch_udf(make_predict_fn, ...)`: Spark calls `make_predict_fn` once per
# Python worker (and caches what it returns), then the function it returns once per batch.
SPARK_PREDICT_BATCH_UDFS = frozenset({"pyspark.ml.functions.predict_batch_udf"})
# `spark.udf.register("name", f)`: a plain Python function registered for SQL runs once per row;
# a function already wrapped by `@udf` / `@pandas_udf` keeps its own evaluation (the decorator's
# route judges it).
SPARK_UDF_REGISTRATIONS = frozenset({("spark.udf", "register")})
# Spark GPU scheduling (TFP401): `builder.config(key, value)` / `SparkConf().set(key, value)` with
# this key below 1 runs several tasks on one GPU at once; Spark gives each task GPU addresses but
# does not hide the others from it (no CUDA_VISIBLE_DEVICES), so each TensorFlow task maps them all.
SPARK_CONFIG_SETTERS = frozenset({("spark.builder", "config"), ("spark.conf", "set")})
SPARK_TASK_GPU_AMOUNT = "spark.task.resource.gpu.amount"
SPARK_EXECUTOR_ENVIRONMENT = "spark.executorEnv."  # + a variable name: set in each executor
SPARK_PANDAS_UDF_TYPES = ("pyspark.sql.functions.PandasUDFType.",)
SPARK_ITERATOR_UDF_TYPES = ("_ITER",)  # PandasUDFType.SCALAR_ITER, MAP_ITER: once per partition
ITERATOR_TYPES = frozenset({"typing.Iterator", "collections.abc.Iterator", "typing.Iterable",
                            "collections.abc.Iterable"})


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
