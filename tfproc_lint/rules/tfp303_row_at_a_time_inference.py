"""TFP303 (opt-in): a process pool task that runs the model on one item, mapped over many items; an
engine task that does the same (`rdd.map`, `client.map`), or loops over its partition's rows
(`mapPartitions`, `foreachPartition`, `mapInPandas`, an iterator `pandas_udf`) running the model on
one row at a time; a row `udf`, a plain `pandas_udf` or `map_batches` looping over its batch's rows,
and `client.submit`, `dask.delayed` or a Ray task or actor method submitted once per row, where the
model is kept per worker."""

from __future__ import annotations


from tfproc_lint.analysis import engine_models, engine_objects, engines, rows

from tfproc_lint.analysis.kinds import Kind
from tfproc_lint.analysis.rows import TaskItems
from tfproc_lint.analysis.values import TaskCall
from tfproc_lint.analysis.workers import RUNS_A_FUNCTION, WorkerKind
from tfproc_lint.diagnostics import Severity
from tfproc_lint.knowledge.engines import TaskGrain
from tfproc_lint.knowledge.processes import ONE_TASK_METHODS, POOL_MAP_METHODS as MAP_METHODS
from tfproc_lint.rules.base import Example, Finding, Report, Rule, finding, shown, worded

# Rows/s of the same model served three ways on 2 cores (one row = 64 floats, 2 spawn workers with an
# initializer): one row per pool task, 64-row chunks per pool task, one process calling the model on
# 64 rows at a time. runtime_probe's benchmark, patterns init-spawn, chunked and batched: the medians
# of the full run committed in docs/probe/report.json (`make probe`, 2026-12-01, TF 2.21 CPU, a shared
# 2-core machine). tests/test_opt_in_rules.py checks them against that report.
ROWS_PER_S = {
    "graph": {"init-spawn": 2025, "chunked": 47764, "batched": 56392},
    "keras": {"init-spawn": 2157, "chunked": 40485, "batched": 40250},
    "savedmodel": {"init-spawn": 1734, "chunked": 38953, "batched": 37597},
}
CHUNK_ROWS = 64
# Rows/s of one Keras model (Dense(256) on rows of 64 floats, loaded once per partition) on Spark
# local[2], 2 partitions: a loop calling `model.predict` on one row at a time, and one `predict` on
# the partition's rows stacked into a batch. runtime_probe's tfp303_spark_row_partition_bad and
# tfp303_spark_stacked_partition_fixed (512 and 2,048 rows), one run each (TF 2.21 CPU, PySpark 4.3,
# 2026-12-04, a 2-core machine shared with other jobs; an earlier run at load average 9 gave 11
# against 1,256). With `predict_on_batch` per row instead the gap was small (3,729 against 5,732
# rows/s over 10,240 rows): Spark's own cost per row dominates.
SPARK_ROWS_PER_S = {"row": 19, "stacked": 4312, "row_on_batch": 3729, "stacked_on_batch": 5732}
# Rows/s of the same model (loaded once per worker) on Dask LocalCluster(processes=True, n_workers=2)
# and on Ray (ray.init(num_cpus=2)): one task per row calling `predict_on_batch` on it (Dask:
# `client.submit` per row, a WorkerPlugin's model; Ray: a task per row, a lazy global), against
# one call per chunk of stacked rows (Dask: `client.map` over 8 chunks) and ray.data `map_batches`
# with a callable class (dataset execution included). runtime_probe's tfp303_dask_row_tasks_bad /
# tfp303_dask_stacked_chunks_fixed and tfp303_ray_row_tasks_bad / tfp303_ray_map_batches_fixed, one
# `tfproc-lint probe` run each (TF 2.21 CPU, distributed 2026.8, Ray 2.60, 2026-12-04, a shared
# 2-core machine).
DASK_ROWS_PER_S = {"row": 328, "stacked": 11274}
RAY_ROWS_PER_S = {"row": 887, "stacked": 4157}


def speedup(pattern: str) -> tuple[float, float]:
    """The lowest and highest rows/s ratio of `pattern` over one row per task, across workloads."""
    ratios = [rates[pattern] / rates["init-spawn"] for rates in ROWS_PER_S.values()]
    return min(ratios), max(ratios)


def _range(pattern: str) -> str:
    low, high = speedup(pattern)
    return f"{low:.0f}x" if round(low) == round(high) else f"{low:.0f}-{high:.0f}x"


def _rates(pattern: str) -> str:
    rates = [workload[pattern] for workload in ROWS_PER_S.values()]
    return f"{min(rates):,}-{max(rates):,}"


@finding
class OneItemPerTask(Finding):
    """A pool task that runs the model on the one item it is given."""

    task: str = shown()
    line: int = shown()  # the model call
    run: str = shown()
    pool: str = shown()

    def message(self) -> str:
        return (f"`{self.task}` runs the model on one item per task (line {self.line}: `{self.run}`): one model call "
                f"per row; send chunks of rows (`{self.pool}.map(predict_chunk, np.array_split(rows, n))`) or call "
                f"the model on batches in one process (measured on 2 cores: {CHUNK_ROWS}-row chunks "
                f"{_range('chunked')} the rows/s of one row per task, one process with {CHUNK_ROWS} rows per call "
                f"{_range('batched')})")


@finding
class OneRowPerCall(Finding):
    """An engine task or actor method that runs the model on one row per call."""

    caller: str = shown()  # the task, or the actor method called in a loop
    where: str  # what one call gets: "one row per task", ...
    line: int = shown()
    run: str = shown()
    remedy: str = worded()  # the engine's way to batch

    def message(self) -> str:
        return (f"`{self.caller}` runs the model on {self.where} (line {self.line}: `{self.run}`): one model call per "
                f"row; {self.remedy}")


class RowAtATimeInference(Rule):
    code = "TFP303"
    name = "row-at-a-time-inference"
    summary = "pool or engine task runs the model on one item or row at a time; send chunks or batch per partition"
    severity = Severity.WARNING
    default_enabled = False
    what_it_does = (
        "Reports a process pool task (`Pool.map`/`imap`/`starmap`/..., `ProcessPoolExecutor.map`, or "
        "`apply_async`/`submit` in a loop) that calls a TensorFlow model on a batch of one made from "
        "its item: `model.predict(x[None])`, `model(x[np.newaxis, ...])`, "
        "`model.predict_on_batch(np.expand_dims(x, 0))`, `np.array([x])`, `x.reshape(1, -1)`, "
        "`sess.run(fetches, {placeholder: [x]})`. The model is a Keras model, a loaded SavedModel, a "
        "`tf.function` or a session, resolved through the file's names (an initializer's global, a "
        "per-task build). The item is the task's argument or a cheap conversion of it (`np.asarray`, "
        "`.astype`, arithmetic, an index into an array). Opt-in: whether batching pays depends on the "
        "work, so the rule is off until selected. On Ray, Dask and Spark it reports an engine task "
        "run once per item (`rdd.map`, `rdd.foreach`, `client.map`, `bag.map`, a `ray.data` `map`) that does "
        "the same with its item, and a task run once per partition (`rdd.mapPartitions`, "
        "`foreachPartition`, `DataFrame.mapInPandas`, an iterator `pandas_udf`) with a loop (or "
        "comprehension) over its rows, or over the rows of each batch it is given, that runs the model "
        "on one loop row at a time: `for row in rows: model.predict(np.array([row]))`. Also, where the "
        "model is kept per worker (a global the worker loads once, an actor's or callable class's "
        "attribute set in `__init__`, a Dask WorkerPlugin's `get_worker().model`): a row `udf` that runs it "
        "on its row's columns, a plain `pandas_udf` or a `ray.data` `map_batches` function or class "
        "that loops over its batch's rows, and `client.submit`, `dask.delayed`, a Ray task or a Ray "
        "actor method submitted once per item of a loop with one row each. "
        + engine_objects.RECEIVED.rstrip()
    )
    why_bad = (
        "Each task pays a model call, a pickled round trip to the worker and the pool's bookkeeping for "
        "one row, and a model call costs about as much for one row as for dozens. With the same model "
        f"on 2 cores, chunks of {CHUNK_ROWS} rows through the same pool ran {_range('chunked')} the rows/s "
        f"of one row per task, and one process calling the model on {CHUNK_ROWS} rows at a time ran "
        f"{_range('batched')} (one row per task: {_rates('init-spawn')} rows/s)."
    )
    known_problems = (
        "Not reported when an item is more than a row: a path or a file to read and decode (an image, "
        "an audio clip), a shard of a dataset, a batch (the task calls the model on its argument as "
        "it is), or an item turned into the model's input by a function the rule does not know. An "
        "item that is large in memory (a full-size image array) is reported: batching helps less "
        f"there than for the {CHUNK_ROWS}-float rows measured. Items of different shapes (sentences "
        "of different lengths) need padding before they batch. Tasks given through joblib are not "
        "checked. Engine tasks: a loop over chunks of a partition (`np.stack(chunk)`) and a single "
        "model call on one row outside any loop are not reported. A row `udf`, a plain `pandas_udf`, "
        "`map_batches` and tasks submitted in a loop are reported only where the model is kept per worker: "
        "a model loaded in the task on every call is TFP301's finding, one captured from the driver "
        "TFP103's, except on Spark, where a Keras model or SavedModel the driver made at module level "
        "travels with the task function (unpickled once per task, no TFP103) and each row is one model "
        "call on it: reported; on Dask, a global that a script's task loads lazily lasts one task (Dask gives the "
        "function fresh globals for every task, measured), so it is not taken as kept per worker. A "
        "row given to the model as it is (`model.predict(row)`) may be a chunk and is not reported."
    )
    fix_safety = (
        "No automatic fix: the task function's signature and the results' shape change. Send chunks "
        "(`pool.map(predict_chunk, np.array_split(rows, n))`, where `predict_chunk` runs the model "
        "once on its chunk) and concatenate the results, or drop the pool and call the model on "
        "batches in one process. On an engine: one model call per partition on its rows stacked "
        "together (`model.predict(np.stack(list(rows)))`, in chunks for large partitions), "
        "`ray.data`'s `map_batches` on Ray, chunks or `map_partitions` on Dask."
    )
    evidence = (
        "runtime_probe's benchmark serves the same model (4xDense(256) on rows of 64 floats, as a TF1 "
        "graph, a Keras model and a SavedModel) three ways on 2 cores: one row per task in a 2-worker "
        f"spawn pool with an initializer, {CHUNK_ROWS}-row chunks per task in the same pool, and one "
        f"process with {CHUNK_ROWS} rows per call. Medians of 5 runs of the full probe (`make probe`) "
        "on a shared machine, rows/s "
        + "; ".join(f"{workload}: {rates['init-spawn']:,} / {rates['chunked']:,} / {rates['batched']:,}"
                    for workload, rates in ROWS_PER_S.items())
        + ". The scenario tfp303_row_pool_bad (one row per task) must be slower than its chunked twin "
        "tfp303_chunked_pool_fixed, and tfp303_batched_one_process_fixed faster than it, by 3x or more. "
        "On Spark local[2] (PySpark 4.3), rows of 64 floats in 2 partitions, the model loaded once "
        "per partition, one run on a busy shared machine: `model.predict` on one row per call in the "
        f"partition's loop (tfp303_spark_row_partition_bad) {SPARK_ROWS_PER_S['row']:,} rows/s, one "
        f"`predict` on the stacked rows (tfp303_spark_stacked_partition_fixed) {SPARK_ROWS_PER_S['stacked']:,} "
        "rows/s; the probe requires 3x or more. The cheaper `predict_on_batch` on one row per call gained "
        f"less: {SPARK_ROWS_PER_S['row_on_batch']:,} against {SPARK_ROWS_PER_S['stacked_on_batch']:,} "
        "rows/s over 10,240 rows, where Spark's own cost per row dominates. On Dask "
        "(LocalCluster(processes=True, n_workers=2)), the model kept per worker by a WorkerPlugin: one "
        f"`client.submit` task per row (tfp303_dask_row_tasks_bad) {DASK_ROWS_PER_S['row']:,} rows/s, "
        f"`client.map` over 8 chunks of stacked rows (tfp303_dask_stacked_chunks_fixed) "
        f"{DASK_ROWS_PER_S['stacked']:,}. On Ray (ray.init(num_cpus=2)): one task per row, the model a "
        f"lazy global per worker (tfp303_ray_row_tasks_bad) {RAY_ROWS_PER_S['row']:,} rows/s, ray.data "
        f"`map_batches` with a callable class (tfp303_ray_map_batches_fixed) {RAY_ROWS_PER_S['stacked']:,}, "
        "the dataset's start included. One run each on a shared 2-core machine; the probe requires 3x or more."
    )
    references = (
        "https://docs.python.org/3/library/multiprocessing.html#multiprocessing.pool.Pool.map",
        "https://keras.io/api/models/model_training_apis/#predictonbatch-method",
        "https://numpy.org/doc/stable/reference/generated/numpy.array_split.html",
    )
    bad_examples = (
        Example(
            """\
            import multiprocessing as mp
            import tensorflow as tf

            model = None

            def load():
                global model
                model = tf.keras.models.load_model('model.keras')

            def predict_row(row):
                return model.predict_on_batch(row[None])[0]

            if __name__ == '__main__':
                with mp.get_context('spawn').Pool(2, initializer=load) as pool:
                    scores = pool.map(predict_row, rows)
            """,
            ("TFP303",),
            config=(("extend-select", "TFP303"),),
        ),
        Example(
            """\
            from concurrent.futures import ProcessPoolExecutor
            import numpy as np
            import tensorflow.compat.v1 as tf

            sess = features = scores = None

            def start():
                global sess, features, scores
                features = tf.placeholder(tf.float32, [None, 64])
                scores = tf.layers.dense(features, 1)
                sess = tf.Session()
                sess.run(tf.global_variables_initializer())

            def score(row):
                return sess.run(scores, {features: [row]})[0]

            if __name__ == '__main__':
                with ProcessPoolExecutor(2, initializer=start) as executor:
                    futures = [executor.submit(score, row) for row in np.load('rows.npy')]
            """,
            ("TFP303",),
            config=(("extend-select", "TFP3"),),
        ),
        Example(
            """\
            import numpy as np
            import tensorflow as tf
            from pyspark.sql import SparkSession

            def score_partition(rows):
                model = tf.keras.models.load_model('fraud.keras')
                for row in rows:
                    yield float(model.predict(np.array([row]), verbose=0)[0, 0])

            if __name__ == '__main__':
                spark = SparkSession.builder.getOrCreate()
                rows = spark.sparkContext.parallelize(list(np.load('rows.npy')), 8)
                scores = rows.mapPartitions(score_partition).collect()
            """,
            ("TFP303",),
            config=(("extend-select", "TFP3"),),
        ),
    )
    good_examples = (
        Example(
            """\
            import multiprocessing as mp
            import numpy as np
            import tensorflow as tf

            model = None

            def load():
                global model
                model = tf.keras.models.load_model('model.keras')

            def predict_chunk(chunk):
                return model.predict_on_batch(chunk)

            if __name__ == '__main__':
                with mp.get_context('spawn').Pool(2, initializer=load) as pool:
                    scores = np.concatenate(pool.map(predict_chunk, np.array_split(rows, 16)))
            """,
            config=(("extend-select", "TFP303"),),
        ),
        Example(
            """\
            import multiprocessing as mp
            import tensorflow as tf

            model = None

            def load():
                global model
                model = tf.keras.models.load_model('classifier.keras')

            def classify(path):
                image = tf.io.decode_jpeg(tf.io.read_file(path))
                return model.predict_on_batch(image[None])[0]

            if __name__ == '__main__':
                with mp.get_context('spawn').Pool(2, initializer=load) as pool:
                    labels = pool.map(classify, image_paths)
            """,
            config=(("extend-select", "TFP303"),),
        ),
        Example(
            """\
            import numpy as np
            import tensorflow as tf
            from pyspark.sql import SparkSession

            def score_partition(rows):
                model = tf.keras.models.load_model('fraud.keras')
                rows = list(rows)
                if rows:
                    yield from model.predict(np.stack(rows), verbose=0)[:, 0]

            if __name__ == '__main__':
                spark = SparkSession.builder.getOrCreate()
                rows = spark.sparkContext.parallelize(list(np.load('rows.npy')), 8)
                scores = rows.mapPartitions(score_partition).collect()
            """,
            config=(("extend-select", "TFP3"),),
        ),
    )

    def check_crossing(self, crossing, analysis):
        if engines.is_engine(crossing):
            if crossing.callable is not None:
                yield from self._check_engine_task(crossing, analysis)
            else:
                yield from self._check_actor_method(crossing, analysis)
            return
        if crossing.owner.kind not in (Kind.POOL, Kind.EXECUTOR) or crossing.callable is None:
            return
        method = crossing.route.method if crossing.route.is_pool_task else ""
        if method not in MAP_METHODS and method not in ONE_TASK_METHODS:
            return
        worker = analysis.worker(crossing.callable, crossing.callable_scope, crossing.site.order)
        if worker.function is None or worker.kind not in RUNS_A_FUNCTION:
            return
        run = rows.one_item_run(analysis, worker.function)
        if run is None or (method in ONE_TASK_METHODS and not analysis.loops_around(crossing.call)):
            return
        yield Report(
            crossing.callable,
            OneItemPerTask(analysis.code(crossing.callable, 30), analysis.line_of(run), analysis.code(run, 40),
                           analysis.code(crossing.call.func.value, 20)),
            related=((run, "the model runs on one item here"),),
        )

    def _check_engine_task(self, crossing, analysis):
        """An engine task run per item on one row, per partition or batch with a loop that runs the
        model on one row at a time, or submitted once per item of a loop on one row."""
        tasks = crossing.owner.task.grain
        if tasks not in ENGINE_TASKS or (tasks == TaskGrain.ONE and not analysis.loops_around(crossing.call)):
            return
        worker = engines.task_worker(analysis, crossing)
        function = worker.function if worker.kind in RUNS_A_FUNCTION else None
        if tasks == TaskGrain.PER_BATCH and function is None:
            function = engine_models.callable_class_call(analysis, crossing)
        if tasks in ONE_ROW_TASKS and worker.kind is WorkerKind.LAMBDA and worker.lambda_node is not None:
            run = rows.one_row_run(analysis, worker.lambda_node.body, TaskItems.of_lambda(analysis, worker))
        elif function is not None:
            items = TaskItems(analysis, function)
            if tasks in (TaskGrain.PER_PARTITION, TaskGrain.PER_BATCH):
                items = items.loop_rows()
            run = rows.one_row_run(analysis, function.node.body, items) if items.params else None
        else:
            return
        if run is None:
            return
        fresh_globals = engines.engine(crossing) == "dask" and engines.is_script(analysis, crossing)
        if tasks in NEW_ENGINE_TASKS and not rows.model_kept_per_worker(analysis, run, function, fresh_globals) \
                and not rows.driver_model_in_spark_task(analysis, crossing, run):
            return  # built per call (TFP301) or the driver's own (TFP103): batching is not the first fix
        name = engines.engine(crossing)
        yield Report(
            crossing.callable,
            OneRowPerCall(analysis.code(crossing.callable, 30), ENGINE_WHERE[tasks], analysis.line_of(run),
                          analysis.code(run, 40), ENGINE_FIXES[name]),
            related=((run, "the model runs on one row here"),),
        )

    def _check_actor_method(self, crossing, analysis):
        """A Ray actor method called once per item of a loop (`[actor.score.remote(row) for row in
        rows]`): the crossing has no callable, the method is the actor class's."""
        if crossing.owner.task.call is not TaskCall.ACTOR_METHOD or not analysis.loops_around(crossing.call):
            return
        function = engine_models.actor_method(analysis, crossing)
        if function is None:
            return
        run = rows.one_row_run(analysis, function.node.body, TaskItems(analysis, function))
        if run is None or not rows.model_kept_per_worker(analysis, run, function):
            return
        method = crossing.call.func.value
        yield Report(
            method,
            OneRowPerCall(analysis.code(method, 30), ENGINE_WHERE[TaskGrain.ONE], analysis.line_of(run),
                          analysis.code(run, 40), ENGINE_FIXES['ray']),
            related=((run, "the model runs on one row here"),),
        )


ENGINE_TASKS = frozenset({TaskGrain.PER_ITEM, TaskGrain.PER_PARTITION, TaskGrain.PER_ROW,
                          TaskGrain.PER_BATCH, TaskGrain.ONE})
ONE_ROW_TASKS = frozenset({TaskGrain.PER_ITEM, TaskGrain.PER_ROW, TaskGrain.ONE})
# Routes added after the first engine round: reported only where the model is kept per worker.
NEW_ENGINE_TASKS = frozenset({TaskGrain.PER_ROW, TaskGrain.PER_BATCH, TaskGrain.ONE})
ENGINE_WHERE = {
    TaskGrain.PER_ITEM: "one row per task",
    TaskGrain.PER_ROW: "one row per call of the udf",
    TaskGrain.ONE: "one row per task, one task per item of the loop",
    TaskGrain.PER_PARTITION: "one row at a time in a loop over the partition's rows",
    TaskGrain.PER_BATCH: "one row at a time in a loop over the batch's rows",
}


ENGINE_FIXES = {name: engines.BY_NAME[name].batching_recipe(rates)  # knowledge/engines.py
                for name, rates in (("spark", SPARK_ROWS_PER_S), ("dask", DASK_ROWS_PER_S), ("ray", RAY_ROWS_PER_S))}
