"""TensorFlow and Keras: what is runtime state, what starts the runtime, TF1 graph mode, the
settings the runtime reads once, GPUs, and what runs harmlessly at import time.

Names are canonical (analysis/names.py: `tf.compat.v1.Session` -> `tensorflow.Session`,
`tf.keras.models.load_model` -> `keras.models.load_model`, `multiprocess.Pool` -> `multiprocessing.Pool`).
tests/test_api_knowledge.py checks the names against the installed libraries.
"""

from __future__ import annotations

from tfproc_lint.knowledge.kinds import Kind

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
# How often a fork after graph building hung, measured by runtime_probe/fork_hazard.py (docs/probe/fork-hazard.md;
# tests/test_fork_hazard.py checks it): TFP201's message and the guard's (guard/tfhooks.py) say it.
GRAPH_FORK_RATE = "measured: 1 of 83 runs hung under load"

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
# TF1 `GPUOptions` fields, also set as attributes (`config.gpu_options.allow_growth = True`).
GPU_MEMORY_OPTIONS = frozenset({"allow_growth", "per_process_gpu_memory_fraction", "visible_device_list"})
TF1_GPU_OPTIONS = frozenset({"tensorflow.GPUOptions"})
TF1_DEVICE_COUNT = "device_count"  # ConfigProto(device_count={"GPU": 0}): a session with no GPU device
# Calls that show the code means to use a GPU (besides GPU device strings such as "/GPU:0").
GPU_QUERIES = frozenset({
    "tensorflow.test.is_gpu_available",
    "tensorflow.test.gpu_device_name",
    "tensorflow.test.is_built_with_cuda",
    "tensorflow.test.is_built_with_gpu_support",
    "keras.utils.multi_gpu_model",
})
# The memory-growth fix calls these.
LIST_PHYSICAL_DEVICES = "tensorflow.config.list_physical_devices"
SET_MEMORY_GROWTH = "tensorflow.config.experimental.set_memory_growth"

# --- Names a fix may add ----------------------------------------------------------------------------
FIX_LOADERS = frozenset({"keras.models.load_model", "keras.saving.load_model", "tensorflow.saved_model.load",
                         "tensorflow_hub.load"})


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
