"""TFP301: the pool callable builds TensorFlow state on every task; use a worker initializer."""

from __future__ import annotations

import libcst as cst

from tfproc_lint.analysis import api, engine_objects, engines
from tfproc_lint.analysis.dependence import derived_names, reads_any
from tfproc_lint.analysis.kinds import Kind
from tfproc_lint.analysis.names import is_tensorflow
from tfproc_lint.analysis.routes import RouteKind, one_task_per_child
from tfproc_lint.analysis.symbols import FunctionInfo
from tfproc_lint.analysis.values import argument
from tfproc_lint.analysis.walk import calls_in, calls_in_evaluation_order, iter_tree
from tfproc_lint.analysis.workers import WorkerKind
from tfproc_lint.diagnostics import Severity
from tfproc_lint.fixes.worker_initializer import MoveStateToInitializer
from tfproc_lint.rules.base import Example, Report, Rule

_CACHE_DECORATORS = ("lru_cache", "cache", "cached", "memoize", "cached_property")


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
        "task's own per-task build."
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
        "Like every fix, the rewrite is analysed again: a setting left in the task that would now run "
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
        "reported. "
        + engine_objects.RECEIVED + "Examples (Ray, Dask, Spark):"
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
            f"`{analysis.code(crossing.callable, 30)}` builds TensorFlow state on every task (line "
            f"{analysis.line_of(builder)}: `{analysis.code(builder, 40)}`): build it once per worker "
            f"with {pool}(initializer=...), one build per worker instead of one per task",
            fix=fix,
        )

    @staticmethod
    def _engine(crossing, analysis):
        """A Ray task, a Dask task, a Spark row function or udf, a Ray Data batch function that
        builds TF state on every call. Silent for what runs once per partition (mapPartitions, an
        iterator pandas_udf, dask map_partitions), for classes (Ray actors, map_batches given a
        callable class) and for a Dask client with a worker plugin or `client.run` initializer."""
        extra = crossing.owner.extra
        if extra.get("tasks") == "per-partition" or not engines.many_tasks(analysis, crossing):
            return
        receiver = extra.get("receiver")
        if receiver is not None and analysis.engine_routes.has_initializer(receiver, crossing.site):
            return
        worker = engines.task_worker(analysis, crossing)
        if worker.function is None or worker.kind not in (WorkerKind.FUNCTION, WorkerKind.METHOD):
            return
        builders = per_task_builders(analysis, worker.function)
        if not builders or _trains(worker.function) or engines.returns_state(analysis, worker.function):
            return  # a task whose product is what it builds (trained, or returned) needs its own
        derived = derived_names(worker.function.node)
        if any(_depends_on_task(analysis, worker.function, builder, derived) for builder in builders):
            return
        builder = builders[0]
        unit = {"per-row": "row", "per-batch": "batch", "per-item": "item"}.get(extra.get("tasks"), "task")
        name = engines.engine(crossing)
        yield Report(
            crossing.callable,
            f"`{analysis.code(crossing.callable, 30)}` given to {crossing.route} builds TensorFlow state on every "
            f"{unit} (line {analysis.line_of(builder)}: `{analysis.code(builder, 40)}`): "
            f"{engines.PER_WORKER_RECIPES[name]}",
        )


def _builds_per_task(crossing, analysis) -> list[cst.Call]:
    """The calls by which this crossing's task builds TF state on every task, where one build per
    worker would serve every task; [] otherwise. A pool's initializer is no proof that its tasks
    stopped building: each task is judged on its own code."""
    owner = crossing.owner
    if owner.kind not in (Kind.POOL, Kind.EXECUTOR) or crossing.callable is None:
        return []
    if crossing.route.kind is RouteKind.INITARGS or not isinstance(owner.origin, cst.Call):
        return []
    if one_task_per_child(owner.origin, owner.kind):
        return []
    worker = analysis.worker(crossing.callable, crossing.callable_scope, crossing.site.order)
    if worker.function is None or worker.kind not in (WorkerKind.FUNCTION, WorkerKind.METHOD):
        return []
    builders = per_task_builders(analysis, worker.function)
    if not builders or _trains(worker.function):
        return []  # nothing built per task, or the task trains what it builds (the build is the work)
    derived = derived_names(worker.function.node)
    if any(_depends_on_task(analysis, worker.function, builder, derived) for builder in builders):
        return []  # what is built comes from the task: one per worker could not serve every task
    pool_owner = analysis.owners.get(owner.origin)
    if pool_owner is not None and _one_task_per_worker(analysis, pool_owner):
        return []
    return builders


def per_task_builders(analysis, info: FunctionInfo, depth: int = 0) -> list[cst.Call]:
    """The calls in `info` that build TF state on every call (not behind a cache), directly or
    through a helper function of the same file."""
    builders = []
    for call in _unguarded_calls(info.node.body.body):
        if analysis.tf.builds_state(call):
            builders.append(call)
            continue
        site = analysis.site(call)
        if depth < 2 and site is not None:
            callee = analysis.worker(call.func, site.scope, site.order)
            helper = callee.function
            if helper is not None and helper is not info and not _is_cached(helper):
                if per_task_builders(analysis, helper, depth + 1):
                    builders.append(call)
    return builders


def _depends_on_task(analysis, info: FunctionInfo, builder: cst.Call, derived: set[str]) -> bool:
    """The build reads the task's data: in its own arguments (`load_model(task_path)`), or, for a
    graph or session, in what was built into the graph before it (`tf.placeholder(shape=task_dim)`,
    `build_graph(task)`)."""
    if reads_any(builder, derived):
        return True
    if analysis.kind_of(builder).kind not in (Kind.SESSION, Kind.GRAPH):
        return False
    order = analysis.symbols.order_of_node.get(builder, 0)
    for call in calls_in(info.node.body):
        call_site = analysis.site(call)
        if call_site is None or not reads_any(call, derived):
            continue
        if _runs_task_fetches(analysis, call, derived):
            return True  # sess.run(fetches built from the task): the graph is the task's
        if analysis.symbols.order_of_node.get(call, 0) >= order:
            continue
        name = analysis.name_of(call.func)
        if is_tensorflow(name) or analysis.callee(call, call_site):
            return True
    return False


def _runs_task_fetches(analysis, call: cst.Call, derived: set[str]) -> bool:
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value in api.SESSION_RUNS and call.args):
        return False
    return analysis.kind_of(func.value).kind is Kind.SESSION and reads_any(call.args[0].value, derived)


def _trains(info: FunctionInfo) -> bool:
    """The task calls a training method (`model.fit`, `optimizer.minimize`, ...)."""
    return any(isinstance(call.func, cst.Attribute) and call.func.attr.value in api.TRAINING_METHODS
               for call in calls_in(info.node.body))


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


def _unguarded_calls(statements):
    """Calls made on every execution: not under a cache check (`if x is None`, `except`)."""
    for statement in statements:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            continue
        if isinstance(statement, cst.If):
            yield from calls_in_evaluation_order(statement.test)
            if not _is_cache_check(statement.test):
                yield from _unguarded_calls(statement.body.body)
            continue
        if isinstance(statement, cst.Try):
            yield from _unguarded_calls(statement.body.body)
            for part in (statement.orelse, statement.finalbody):
                if part is not None:
                    yield from _unguarded_calls(part.body.body)
            continue
        if isinstance(statement, cst.SimpleStatementLine):
            yield from calls_in_evaluation_order(statement)
            continue
        if isinstance(statement, cst.With):
            for item in statement.items:
                yield from calls_in_evaluation_order(item.item)
            yield from _unguarded_calls(statement.body.body)
            continue
        if isinstance(statement, (cst.For, cst.While)):
            yield from calls_in_evaluation_order(statement.iter if isinstance(statement, cst.For) else statement.test)
            yield from _unguarded_calls(statement.body.body)


def _is_cache_check(test: cst.BaseExpression) -> bool:
    """`x is None`, `not x`, `key not in cache`, `hasattr(...)`, combined with and/or."""
    if isinstance(test, cst.BooleanOperation):
        return _is_cache_check(test.left) or _is_cache_check(test.right)
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return isinstance(test.expression, (cst.Name, cst.Attribute, cst.Subscript, cst.Call))
    if isinstance(test, cst.Comparison):
        for target in test.comparisons:
            if isinstance(target.operator, (cst.In, cst.NotIn)):
                return True
            if isinstance(target.operator, (cst.Is, cst.IsNot)) and isinstance(target.comparator, cst.Name) \
                    and target.comparator.value == "None":
                return True
    if isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "hasattr":
        return True
    return False


def _is_cached(info: FunctionInfo) -> bool:
    return any(name.split(".")[-1] in _CACHE_DECORATORS for name in info.decorator_names)
