"""What tfproc-lint knows about the distributed engines' APIs (Ray, Dask, Spark), as data. The
rest of the libraries' knowledge is in tfproc_lint/knowledge/ (TensorFlow, processes, environment
variables, package roots), which the guard shares.

Names are canonical (see names.py). tests/test_api_knowledge.py and test_api_knowledge_ray.py check
them against the installed libraries. The analysis modules read these tables; they hold no word
lists of their own.
"""

from __future__ import annotations

from tfproc_lint.analysis.kinds import Kind


# --- GPUs (TFP401) ----------------------------------------------------------------------------------
# Dask: a LocalCluster's worker count and the resources each worker advertises (the same for all:
# LocalCluster does not split the machine's GPUs among its workers, unlike dask-cuda).
DASK_WORKER_COUNT = "n_workers"
DASK_RESOURCES = "resources"
DASK_GPU_RESOURCE = "GPU"

# --- One item as a batch of one (TFP303) ------------------------------------------------------------
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
