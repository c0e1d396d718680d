"""The distributed engines (Ray, Dask, Spark) as data: their packages, the objects and methods that
run a function in their workers or send a value there, what they raise, and the remedies the
linter and the guard word for each engine (`ENGINE_FACTS`). The analysis (analysis/engines/) reads
it, and so does the runtime guard (guard/engines.py, engine_workers.py, engine_sends.py), which
never imports the linter. tests/test_api_knowledge*.py check the names against the installed engines.
"""

from __future__ import annotations

from enum import Enum

from tfproc_lint.knowledge.kinds import Kind
from tfproc_lint.records import record


class TaskGrain(Enum):
    """How many times an engine runs a task's callable."""
    ONE = "one"  # once per submission (a Ray task, client.submit, dask.delayed, ray.put)
    PER_ITEM = "per-item"  # once per item (rdd.map, client.map, bag.map, ray.data map)
    PER_ROW = "per-row"  # once per row (a Spark row udf, spark.udf.register)
    PER_BATCH = "per-batch"  # once per batch of rows (a plain pandas_udf, ray.data map_batches)
    PER_PARTITION = "per-partition"  # once per partition's stream of rows (mapPartitions, an iterator pandas_udf)
    PER_WORKER = "per-worker"  # once per worker (scatter, broadcast, predict_batch_udf's make_predict_fn)

    @property
    def runs_many(self) -> bool:
        """Runs for many items, rows or batches of one call (a per-partition task aside)."""
        return self in (TaskGrain.PER_ITEM, TaskGrain.PER_ROW, TaskGrain.PER_BATCH)

    @property
    def unit(self) -> str:
        """What one run of the callable takes, in messages ("builds ... on every row")."""
        return {TaskGrain.PER_ROW: "row", TaskGrain.PER_BATCH: "batch", TaskGrain.PER_ITEM: "item"}.get(self, "task")


# Dask: a LocalCluster's worker count and the resources each worker advertises (the same for all:
# LocalCluster does not split the machine's GPUs among its workers, unlike dask-cuda).
DASK_WORKER_COUNT = "n_workers"
DASK_RESOURCES = "resources"
DASK_GPU_RESOURCE = "GPU"

# Dask's per-worker state: a WorkerPlugin whose setup(worker) stores the model on the worker
# (`worker.model = load_model(...)`), read back in tasks through `get_worker().model`.
DASK_WORKER_PLUGINS = frozenset({"distributed.WorkerPlugin", "distributed.diagnostics.plugin.WorkerPlugin",
                                 "dask.distributed.WorkerPlugin"})
DASK_PLUGIN_SETUP = "setup"
DASK_GET_WORKER = frozenset({"distributed.get_worker", "distributed.worker.get_worker",
                             "dask.distributed.get_worker"})

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
# (object, method) -> (index of the callable, how many times it runs). The callable is pickled with
# what it captures; the other arguments cross.
ENGINE_TASK_METHODS: dict[tuple[str, str], tuple[int, TaskGrain]] = {
    ("dask.client", "submit"): (0, TaskGrain.ONE),
    ("dask.client", "map"): (0, TaskGrain.PER_ITEM),
    ("dask.bag", "map"): (0, TaskGrain.PER_ITEM),
    ("dask.bag", "filter"): (0, TaskGrain.PER_ITEM),
    ("dask.bag", "map_partitions"): (0, TaskGrain.PER_PARTITION),
    ("dask.collection", "map_partitions"): (0, TaskGrain.PER_PARTITION),
    ("dask.array", "map_blocks"): (0, TaskGrain.PER_PARTITION),
    ("spark.rdd", "map"): (0, TaskGrain.PER_ITEM),
    ("spark.rdd", "flatMap"): (0, TaskGrain.PER_ITEM),
    ("spark.rdd", "filter"): (0, TaskGrain.PER_ITEM),
    ("spark.rdd", "foreach"): (0, TaskGrain.PER_ITEM),
    ("spark.rdd", "mapPartitions"): (0, TaskGrain.PER_PARTITION),
    ("spark.rdd", "mapPartitionsWithIndex"): (0, TaskGrain.PER_PARTITION),
    ("spark.rdd", "foreachPartition"): (0, TaskGrain.PER_PARTITION),
    ("spark.dataframe", "mapInPandas"): (0, TaskGrain.PER_PARTITION),
    ("spark.dataframe", "mapInArrow"): (0, TaskGrain.PER_PARTITION),
    ("ray.dataset", "map_batches"): (0, TaskGrain.PER_BATCH),
    ("ray.dataset", "map"): (0, TaskGrain.PER_ITEM),
    ("ray.dataset", "flat_map"): (0, TaskGrain.PER_ITEM),
    ("spark.udf", "register"): (1, TaskGrain.PER_ROW),
}
# Calls that send their argument to the workers (or the object store) once.
ENGINE_SENDS: dict[tuple[str, str], TaskGrain] = {
    ("dask.client", "scatter"): TaskGrain.PER_WORKER,
    ("spark.context", "broadcast"): TaskGrain.PER_WORKER,
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


# --- Each engine's words: its noun and its remedies ---------------------------------------------------
@record
class EngineFacts:
    name: str  # "ray": the first part of its object types ("ray.dataset") and its key in the tables above
    noun: str  # "Ray", in messages
    # The linter's remedies: how to send TF state instead (TFP101-TFP103), how to load once per worker
    # instead of once per task (TFP301), and how to batch rows (TFP303: a template for the measured
    # rows/s, `{row}` with one row per call and `{stacked}` with stacked rows).
    remedy: str
    per_worker_recipe: str
    batching_recipe: str
    # The guard's, at run time: state that failed to serialise, a model built again in each task, one-row
    # model calls, a model pickled into every task (None: the guard does not count the engine's sends).
    guard_state_fix: str
    guard_build_fix: str
    guard_row_fix: str
    guard_model_send_fix: str | None = None

    @property
    def packages(self) -> tuple[str, ...]:
        return tuple(package for package, engine in ENGINE_PACKAGES.items() if engine == self.name)


RAY = EngineFacts(
    name="ray", noun="Ray",
    remedy="send data or a path and build it inside the task, or once per actor in the __init__ of a @ray.remote class",
    per_worker_recipe=("load it once per actor instead: a @ray.remote class that loads it in __init__ "
                       "(with ray.data, map_batches given a callable class)"),
    batching_recipe=("call it once per batch on the rows stacked together (`ray.data`'s `map_batches`; measured on "
                     "ray.init(num_cpus=2): {row:,} rows/s with a task per row, {stacked:,} with map_batches)"),
    guard_state_fix=("build the state inside the worker: a @ray.remote actor that loads it in __init__ (or "
                     "ray.data map_batches with a callable class), and send file paths or numpy arrays"),
    guard_build_fix=("load it once per worker: a @ray.remote actor that loads it in __init__ (or ray.data map_batches "
                     "with a callable class), or a module-level cache in the task's module"),
    guard_row_fix=("send batches of rows, not single rows: ray.data map_batches, or one task per chunk of rows "
                   "(np.array_split), and call the model once per batch"),
    guard_model_send_fix=("load the model once per worker: a @ray.remote actor that loads it (from a file path) in "
                          "__init__, or ray.data map_batches with a callable class, and send only the rows"),
)
DASK = EngineFacts(
    name="dask", noun="Dask",
    remedy=("send data or a path and build it inside the task, or once per worker in a WorkerPlugin's setup() "
            "(client.register_plugin)"),
    per_worker_recipe=("load it once per worker instead: a WorkerPlugin whose setup() loads it, registered with "
                       "client.register_plugin"),
    batching_recipe=("call it once per chunk or partition on the rows stacked into one batch "
                     "(`client.map(predict_chunk, np.array_split(rows, n))` or `map_partitions`; measured on a "
                     "2-worker LocalCluster: {row:,} rows/s with a task per row, {stacked:,} with one call per chunk)"),
    guard_state_fix=("build the state inside the worker: load it once per worker with a WorkerPlugin "
                     "(client.register_plugin) and send file paths or numpy arrays"),
    guard_build_fix="load it once per worker: a WorkerPlugin (client.register_plugin) or a module-level cache",
    guard_row_fix=("send chunks of rows, not single rows: client.map over np.array_split(rows, n) (or map_partitions / "
                   "map_blocks), and call the model once per chunk"),
    guard_model_send_fix=("save the model once and send its file path: load it once per worker (a WorkerPlugin, or a "
                          "module-level cached loader) and send only the rows"),
)
SPARK = EngineFacts(
    name="spark", noun="Spark",
    remedy=("send data or a path and build it inside the function, once per partition (rdd.mapPartitions, "
            "or an iterator pandas_udf)"),
    per_worker_recipe=("load it once per partition instead: an iterator pandas_udf (Iterator[pd.Series] -> "
                       "Iterator[pd.Series]) or rdd.mapPartitions"),
    batching_recipe=("call it once per partition on the rows stacked into one batch (`rdd.mapPartitions` with "
                     "`model.predict(np.stack(list(rows)))`; measured on Spark local[2]: "
                     "{row:,} rows/s with `predict` on one row per call, {stacked:,} with one call per partition)"),
    guard_state_fix=("build the state inside the task: load it once per partition (mapPartitions, or an "
                     "iterator pandas_udf) and read only file paths or broadcast numpy arrays from the driver"),
    guard_build_fix="load it once per partition: an iterator pandas_udf (Iterator[pd.Series]) or mapPartitions",
    guard_row_fix=("stack the partition's rows (np.stack) and call the model once per partition or per batch of rows "
                   "(mapPartitions, or an iterator pandas_udf)"),
)
ENGINE_FACTS = {facts.name: facts for facts in (RAY, DASK, SPARK)}


# What `ray.get` raises for TF state a Ray task returns: Ray pickles the result in the worker, and the
# error comes back wrapped (measured, Ray 2.x, TF 2.21: a Session or Graph, a Dataset; a Keras model
# returns fine).
RAY_RETURN_ERRORS = {
    Kind.SESSION: "RayTaskError(TypeError): cannot pickle 'Graph' object",
    Kind.GRAPH: "RayTaskError(TypeError): cannot pickle 'Graph' object",
    Kind.DATASET: "RayTaskError(InvalidArgumentError): a Dataset does not pickle (its variant tensor)",
}
