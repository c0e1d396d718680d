"""TFP301: the pool callable builds TensorFlow state on every task; use a worker initializer."""

from __future__ import annotations

import libcst as cst

from tfproc_lint.analysis import engine_objects, engines
from tfproc_lint.analysis.engines import ray_serve
from tfproc_lint.analysis.dependence import derived_names, reads_any
from tfproc_lint.analysis.kinds import Kind
from tfproc_lint.analysis.per_task import depends_on_task, movable_builders, per_task_builders, trains
from tfproc_lint.analysis.routes import RouteKind, one_task_per_child
from tfproc_lint.analysis.values import argument
from tfproc_lint.analysis.walk import iter_tree
from tfproc_lint.analysis.workers import WorkerKind
from tfproc_lint.diagnostics import Severity
from tfproc_lint.fixes.worker_initializer import MoveStateToInitializer
from tfproc_lint.knowledge.engines import TaskGrain
from tfproc_lint.rules.base import Example, Finding, Report, Rule, finding, shown, worded


@finding
class BuildsPerTask(Finding):
    """A pool task that builds TensorFlow state on every task."""

    task: str = shown()
    line: int = shown()  # the build
    build: str = shown()
    pool: str  # Pool or ProcessPoolExecutor

    def message(self) -> str:
        return (f"`{self.task}` builds TensorFlow state on every task (line {self.line}: `{self.build}`): build it "
                f"once per worker with {self.pool}(initializer=...), one build per worker instead of one per task")


@finding
class ImportedBuildsPerTask(Finding):
    """A pool task defined in another module of the project that builds on every task."""

    task: str = shown()
    place: str  # the build, in that module
    reason: str = worded()
    pool: str

    def message(self) -> str:
        return (f"`{self.task}` builds TensorFlow state on every task ({self.place}: {self.reason}): build it once "
                f"per worker with {self.pool}(initializer=...), one build per worker instead of one per task")


@finding
class BuildsPerRequest(Finding):
    """A Ray Serve deployment's request handler that builds TensorFlow state on every request."""

    handler: str = shown()
    line: int = shown()
    build: str = shown()
    where: str  # where to load it instead

    def message(self) -> str:
        return (f"`{self.handler}` runs on every request to a Ray Serve deployment and builds TensorFlow state each "
                f"time (line {self.line}: `{self.build}`): load it once per replica instead, in {self.where}")


@finding
class EngineBuildsPerTask(Finding):
    """An engine task that builds TensorFlow state on every call."""

    task: str = shown()
    route: str = worded()
    unit: str  # task, row, batch or item
    line: int = shown()
    build: str = shown()
    recipe: str = worded()  # the engine's way to build once per worker

    def message(self) -> str:
        return (f"`{self.task}` given to {self.route} builds TensorFlow state on every {self.unit} (line {self.line}: "
                f"`{self.build}`): {self.recipe}")


@finding
class EngineImportedBuildsPerTask(Finding):
    """The same, for a task defined in another module of the project."""

    task: str = shown()
    route: str = worded()
    unit: str
    place: str
    reason: str = worded()
    recipe: str = worded()

    def message(self) -> str:
        return (f"`{self.task}` given to {self.route} builds TensorFlow state on every {self.unit} ({self.place}: "
                f"{self.reason}): {self.recipe}")


class MissingWorkerInitializer(Rule):
    code = "TFP301"
    name = "missing-worker-initializer"
    summary = "pool callable builds TensorFlow state on every task; build it once per worker"
    severity = Severity.WARNING
    fix_availability = "sometimes"
    what_it_does = (
        "Checks the callable given to a process pool (`Pool.map`/`apply_async`/..., "
        "`ProcessPoolExecutor.submit`/`map`) for statements that build TensorFlow state on every "
        "call (a `tf.Graph`, a session, `load_model`, `tf.saved_model.load`, a Keras model build), "
        "directly or through a helper in the same file, when one build per worker would serve every "
        "task: what is built does not depend on the task's data, the task does not train it, and the "
        "pool runs more tasks than it has workers. Each task is judged on its own code: a pool's "
        "`initializer=` that builds something else (or builds for another task) does not stop a "
        "task's own per-task build. With project analysis, a task imported from another module of "
        "the project is judged on that module's code (its summary), for pools and engines alike "
        "(a Ray task decorated there, or wrapped here with `ray.remote(f)`); the message names the "
        "file and line of the build."
    )
    why_bad = (
        "Each task pays the full build: graph construction, weight loading, runtime warm-up. In the "
        "runtime probe's benchmark one model per worker built by an initializer runs tens to hundreds "
        "of times more tasks per second than a model loaded per task."
    )
    known_problems = (
        "Not reported, because an initializer would not reduce the builds: a build cached in a "
        "global behind an `if x is None:` guard, in an `except` branch or an `lru_cache`d helper; a "
        "build from the task's own data (a checkpoint path, hyper-parameters, constants or a dataset "
        "from the task's arguments); a task that trains what it builds; `maxtasksperchild=1`; a "
        "one-shot pool (`Pool(1).apply(...)`) and a pool sized to its batch (`Pool(len(batch))`)."
    )
    fix_safety = (
        "Where the building statements at the top of the task function do not depend on the task's "
        "arguments, the fix moves them into a new module-level initializer that stores the state "
        "in module globals, and adds `initializer=` to the pool. It is unsafe: state built once is "
        "now shared by the tasks of a worker (a task that mutates it affects the next), the "
        "initializer runs in every worker at start-up, and the function no longer works outside "
        "the pool without calling the initializer. Not offered (manual edit required) when the pool "
        "has an initializer already (the build belongs in it), when tasks of the same pool build "
        "different state per task (tasks that build the same state share one new `_init_worker`, "
        "rewritten together), or when a statement before "
        "the build reads the task (a per-task `CUDA_VISIBLE_DEVICES` must stay before the load). "
        "Not offered for a task imported from another module (manual edit required, naming that "
        "module's line): the initializer and the globals belong there, and fixes edit only the "
        "reported file. Like every fix, the rewrite is analysed again: a setting left in the task that would now run "
        "after the initializer started the runtime (TFP402, TFP403) withdraws it."
    )
    evidence = (
        "A Keras model loaded per task and a TF1 graph and session built per task return the same "
        "results as their initializer twins at a small fraction of the throughput; the auto-fixed "
        "scenarios run at the initializer's speed (figures below and in the benchmark)."
    )
    references = (
        "https://docs.python.org/3/library/multiprocessing.html#multiprocessing.pool.Pool",
        "https://docs.python.org/3/library/concurrent.futures.html#processpoolexecutor",
    )
    engines = (
        "Ray, Dask and Spark: a Ray task submitted in a loop, a `client.map` or `dask.bag` map "
        "function, an RDD `map` function, a row `udf` or a `ray.data` `map_batches` function that "
        "loads a model on every call works, but loads it once per call (Spark local[2]: 40 rows "
        "with a per-row load took as long as 400 rows through an iterator pandas_udf). Each engine "
        "has its own once-per-worker form, which the message names (manual edit required): a Ray "
        "actor that loads in `__init__` (or `map_batches` given a callable class), a Dask "
        "`WorkerPlugin` (or `client.run`), and a Spark iterator `pandas_udf` or `mapPartitions`. "
        "Functions that run once per partition, classes, and a Dask client with a plugin are not "
        "reported. A same-file helper that builds the network and loads its weights counts as a load, "
        "and so do Ray Train's `TensorflowCheckpoint.get_model()` (24 batches of a `map_batches` "
        "function: 24 loads, 12 batches/s, against 57 with one load in a callable class) and Ray AIR's "
        "`TensorflowPredictor.from_checkpoint` (older Ray releases). A plain function registered with "
        "`spark.udf.register` runs once per row, like a row `udf` (a SQL query over 40 rows: 40 loads, "
        "11 rows/s, against 158 through a registered iterator pandas_udf, one load per partition). A "
        "Ray Serve deployment's request handlers (`__call__` and public methods: routes, methods "
        "called through a handle; not `__init__` and the methods it calls, `reconfigure`, "
        "`check_health` or a `@serve.multiplexed` loader, which Serve caches per model id) that load a "
        "model load it on every request: load it in the deployment's `__init__`, once per replica (read "
        "from the code only: Ray Serve was not installed where the probe ran). "
        + engine_objects.RECEIVED + "Examples (Ray, Dask, Spark, Ray Serve):"
    )
    bad_examples = (
        Example(
            """\
            import multiprocessing as mp
            import tensorflow as tf

            def predict(row):
                model = tf.keras.models.load_model('model.keras')
                return model.predict(row[None])[0]

            if __name__ == '__main__':
                with mp.get_context('spawn').Pool(2) as pool:
                    print(pool.map(predict, rows))
            """,
            ("TFP301",),
            fixed="""\
            import multiprocessing as mp
            import tensorflow as tf

            _model = None


            def _init_predict():
                global _model
                _model = tf.keras.models.load_model('model.keras')


            def predict(row):
                return _model.predict(row[None])[0]

            if __name__ == '__main__':
                with mp.get_context('spawn').Pool(2, initializer=_init_predict) as pool:
                    print(pool.map(predict, rows))
            """,
        ),
        Example(
            """\
            import ray
            import tensorflow as tf

            @ray.remote
            def classify(batch):
                model = tf.keras.models.load_model('model.keras')
                return model.predict(batch)

            if __name__ == '__main__':
                ray.get([classify.remote(b) for b in batches])
            """,
            ('TFP301',),
        ),
        Example(
            """\
            import tensorflow as tf
            from dask.distributed import Client

            def predict(row):
                model = tf.keras.models.load_model('model.keras')
                return model.predict(row[None])[0]

            if __name__ == '__main__':
                client = Client()
                client.gather(client.map(predict, rows))
            """,
            ('TFP301',),
        ),
        Example(
            """\
            import tensorflow as tf
            from pyspark.sql.functions import udf
            from pyspark.sql.types import DoubleType

            @udf(DoubleType())
            def score(x):
                model = tf.keras.models.load_model('model.keras')
                return float(model.predict([[x]])[0, 0])
            """,
            ('TFP301',),
        ),
        Example(
            """\
            import tensorflow as tf
            from ray import serve

            @serve.deployment
            class Classifier:
                async def __call__(self, request):
                    model = tf.keras.models.load_model('model.keras')
                    return model.predict([(await request.json())['x']]).tolist()
            """,
            ('TFP301',),
        ),
    )
    good_examples = (
        Example(
            """\
            import multiprocessing as mp
            import tensorflow as tf

            model = None

            def init_worker():
                global model
                model = tf.keras.models.load_model('model.keras')

            def predict(row):
                return model.predict(row[None])[0]

            if __name__ == '__main__':
                with mp.get_context('spawn').Pool(2, initializer=init_worker) as pool:
                    print(pool.map(predict, rows))
            """
        ),
        Example(
            """\
            import multiprocessing as mp
            import tensorflow as tf

            _model = None

            def predict(row):
                global _model
                if _model is None:
                    _model = tf.keras.models.load_model('model.keras')
                return _model.predict(row[None])[0]

            if __name__ == '__main__':
                with mp.get_context('spawn').Pool(2) as pool:
                    print(pool.map(predict, rows))
            """
        ),
        Example(
            """\
            import ray
            import tensorflow as tf

            @ray.remote
            class Classifier:
                def __init__(self, path):
                    self.model = tf.keras.models.load_model(path)

                def classify(self, batch):
                    return self.model.predict(batch)

            if __name__ == '__main__':
                actor = Classifier.remote('model.keras')
                ray.get([actor.classify.remote(b) for b in batches])
            """
        ),
        Example(
            """\
            from typing import Iterator

            import pandas as pd
            import tensorflow as tf
            from pyspark.sql.functions import pandas_udf
            from pyspark.sql.types import DoubleType

            @pandas_udf(DoubleType())
            def score(batches: Iterator[pd.Series]) -> Iterator[pd.Series]:
                model = tf.keras.models.load_model('model.keras')
                for batch in batches:
                    yield pd.Series(model.predict(batch.to_numpy()[:, None])[:, 0])
            """
        ),
    )

    def check_crossing(self, crossing, analysis):
        owner = crossing.owner
        if owner.kind is Kind.ENGINE and crossing.callable is not None:
            yield from self._engine(crossing, analysis)
            return
        builders = _builds_per_task(crossing, analysis)
        if not builders:
            yield from self._imported(crossing, analysis)
            return
        worker = analysis.worker(crossing.callable, crossing.callable_scope, crossing.site.order)
        builder = builders[0]
        pool = "Pool" if owner.kind is Kind.POOL else "ProcessPoolExecutor"
        pool_owner = analysis.owners.get(owner.origin)
        fix = None
        if worker.kind is WorkerKind.FUNCTION and pool_owner is not None:
            # Every task of this pool that builds per task: one initializer has to serve them all.
            tasks = [(worker.function, builders)]
            for other in pool_owner.crossings:
                other_builders = _builds_per_task(other, analysis) if other is not crossing else []
                if other_builders:
                    other_worker = analysis.worker(other.callable, other.callable_scope, other.site.order)
                    if all(other_worker.function is not info for info, _ in tasks):
                        tasks.append((other_worker.function, other_builders))
            tasks.sort(key=lambda task: analysis.line_of(task[0].node))  # one rewrite, whichever task reports it
            fix = MoveStateToInitializer(pool_owner, tasks)
        yield Report(
            crossing.callable,
            BuildsPerTask(analysis.code(crossing.callable, 30), analysis.line_of(builder), analysis.code(builder, 40),
                          pool),
            fix=fix,
        )

    def check_file(self, analysis):
        """Ray Serve: a deployment's request handler that builds TF state on every request."""
        for info, klass in ray_serve.request_handlers(analysis):
            builders = per_task_builders(analysis, info)
            if not builders or trains(info) or engines.returns_state(analysis, info):
                continue
            # `self.load()` is not built from the request; `load_model(self.path)` may be (the path
            # may change between requests), and stays silent
            derived = derived_names(info.node) - {info.self_name}
            if any(depends_on_task(analysis, info, builder, derived)
                   or any(reads_any(arg.value, {info.self_name}) for arg in builder.args)
                   for builder in builders):
                continue  # built from the request: one per replica may not serve them
            name = f"{klass.node.name.value}.{info.node.name.value}" if klass is not None else info.node.name.value
            where = "the deployment's __init__" if klass is not None else "the __init__ of a deployment class"
            yield Report(
                info.node.name,
                BuildsPerRequest(name, analysis.line_of(builders[0]), analysis.code(builders[0], 40), where),
            )

    @staticmethod
    def _imported(crossing, analysis):
        """A pool task defined in another module of the project that builds on every task: the
        initializer belongs in that module, which a rewrite of this file cannot edit."""
        worker = analysis.worker(crossing.callable, crossing.callable_scope, crossing.site.order)
        facts = worker.imported
        if facts is None or facts.builds is None or not _pool_runs_many_tasks(crossing, analysis):
            return
        pool = "Pool" if crossing.owner.kind is Kind.POOL else "ProcessPoolExecutor"
        yield Report(
            crossing.callable,
            ImportedBuildsPerTask(analysis.code(crossing.callable, 30), str(facts.builds.place), facts.builds.reason,
                                  pool),
            related=((facts.builds.place, "built on every task"),),
            manual=_elsewhere(facts),
        )

    @staticmethod
    def _engine(crossing, analysis):
        """A Ray task, a Dask task, a Spark row function or udf, a Ray Data batch function that
        builds TF state on every call. Silent for what runs once per partition (mapPartitions, an
        iterator pandas_udf, dask map_partitions), for classes (Ray actors, map_batches given a
        callable class) and for a Dask client with a worker plugin or `client.run` initializer."""
        task = crossing.owner.task
        if task.grain is TaskGrain.PER_PARTITION or not engines.many_tasks(analysis, crossing):
            return
        receiver = task.receiver
        if receiver is not None and analysis.engine_routes.has_initializer(receiver, crossing.site):
            return
        worker = engines.task_worker(analysis, crossing)
        unit = task.grain.unit
        name = engines.engine(crossing)
        facts = worker.imported
        if facts is not None and facts.builds is not None and facts.returns is None:
            yield Report(
                crossing.callable,
                EngineImportedBuildsPerTask(analysis.code(crossing.callable, 30), str(crossing.route), unit,
                                            str(facts.builds.place), facts.builds.reason,
                                            engines.PER_WORKER_RECIPES[name]),
                related=((facts.builds.place, f"built on every {unit}"),),
                manual=_elsewhere(facts),
            )
            return
        if worker.function is None or worker.kind not in (WorkerKind.FUNCTION, WorkerKind.METHOD):
            return
        if engines.returns_state(analysis, worker.function):
            return  # a task whose product is what it builds needs its own
        builders = movable_builders(analysis, worker.function)
        if not builders:
            return
        builder = builders[0]
        yield Report(
            crossing.callable,
            EngineBuildsPerTask(analysis.code(crossing.callable, 30), str(crossing.route), unit,
                                analysis.line_of(builder), analysis.code(builder, 40),
                                engines.PER_WORKER_RECIPES[name]),
        )


def _builds_per_task(crossing, analysis) -> list[cst.Call]:
    """The calls by which this crossing's task builds TF state on every task, where one build per
    worker would serve every task; [] otherwise. A pool's initializer is no proof that its tasks
    stopped building: each task is judged on its own code."""
    if not _pool_runs_many_tasks(crossing, analysis):
        return []
    worker = analysis.worker(crossing.callable, crossing.callable_scope, crossing.site.order)
    if worker.function is None or worker.kind not in (WorkerKind.FUNCTION, WorkerKind.METHOD):
        return []
    # Nothing built per task, the task trains what it builds (the build is the work), or what is
    # built comes from the task (one per worker could not serve every task): nothing to move.
    return movable_builders(analysis, worker.function)


def _pool_runs_many_tasks(crossing, analysis) -> bool:
    """A pool or executor crossing whose tasks outnumber its workers, as far as can be told."""
    owner = crossing.owner
    if owner.kind not in (Kind.POOL, Kind.EXECUTOR) or crossing.callable is None:
        return False
    if crossing.route.kind is RouteKind.INITARGS or not isinstance(owner.origin, cst.Call):
        return False
    if one_task_per_child(owner.origin, owner.kind):
        return False
    pool_owner = analysis.owners.get(owner.origin)
    return pool_owner is None or not _one_task_per_worker(analysis, pool_owner)


def _elsewhere(facts) -> str:
    return f"the task is defined in {facts.place}: its once-per-worker build belongs there"


def _one_task_per_worker(analysis, owner) -> bool:
    """Each pool runs no more tasks than it has workers, so per task is already per worker: a pool
    made per batch in a loop with one worker per item (`Pool(len(batch)).map(f, batch)`), or a
    pool given a single task (`Pool(1).apply(f, args)`)."""
    crossings = [c for c in owner.crossings if c.call is not owner.construction]
    if not crossings:
        return False
    if all(c.route.submits_one_task for c in crossings):
        return not any(_in_loop_below(analysis, c.call, owner.construction) for c in crossings)
    processes = argument(owner.construction, 0, "processes") or argument(owner.construction, 0, "max_workers")
    if isinstance(processes, cst.Call) and isinstance(processes.func, cst.Name) and processes.func.value == "len" \
            and processes.args:
        sized = analysis.code(processes.args[0].value)
        return all(_mapped_iterable(c) == sized for c in crossings)
    return False


def _mapped_iterable(crossing) -> str | None:
    data = argument(crossing.call, 1, "iterable")
    return " ".join(cst.Module([]).code_for_node(data).split()) if data is not None else None


def _in_loop_below(analysis, call: cst.Call, construction: cst.Call) -> bool:
    """`call` sits in a loop (or comprehension) that does not also contain the pool's construction."""
    loops = analysis.loops_around(call)
    return any(not any(n is construction for n in iter_tree(loop, enter_scopes=False)) for loop in loops)
