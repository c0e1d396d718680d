"""TFP302 (opt-in): a pool sized by the CPU count whose workers each build a TensorFlow model."""

from __future__ import annotations

import os
import libcst as cst

from tfproc_lint.analysis import outcomes

from tfproc_lint.analysis.kinds import Kind
from tfproc_lint.analysis.routes import RouteKind
from tfproc_lint.analysis.values import argument
from tfproc_lint.analysis.workers import RUNS_A_FUNCTION
from tfproc_lint.diagnostics import Severity
from tfproc_lint.knowledge import processes
from tfproc_lint.rules.base import Example, Finding, Report, Rule, finding, shown, worded


@finding
class ModelInEveryWorker(Finding):
    pool: str = shown()
    how_many: str = worded()  # how the pool is sized
    line: int = shown()  # the build in each worker
    build: str = shown()
    method: str
    workers: int
    cpus: int
    fewer: int  # CPUs the sizing leaves out
    assumption: str = worded()

    def message(self) -> str:
        return (f"`{self.pool}` starts {self.how_many} and each worker builds its own TensorFlow state (line "
                f"{self.line}: `{self.build}`): {_memory(self.method, self.workers, self.cpus, self.fewer)}; give "
                f"the pool an explicit small worker count, serve the model from one process fed by queues, or use "
                f"threads if the work releases the GIL{self.assumption}")


# Resident memory of one pool worker that imported TensorFlow and loaded its model, by start method:
# runtime_probe's benchmark, full run of 2026-11-30 (docs/probe/report.md, TF 2.21 CPU), "worker RSS
# MiB" of the three initializer patterns, medians over the graph, Keras and SavedModel workloads
# (spawn 537-543, forkserver with TensorFlow preloaded 262-268, fork 263-269). The tfp302 probe
# scenarios measure it again; tests/test_opt_in_rules.py checks these against docs/probe/report.json.
WORKER_RSS_MIB = {"spawn": 540, "forkserver": 265, "fork": 265}
SERVER_CPUS = 64  # a common large machine, to show how memory grows with the CPU count


def _size(mib: int) -> str:
    return f"{mib / 1024:.1f} GiB" if mib >= 1024 else f"{mib} MiB"


class ModelPerCpu(Rule):
    code = "TFP302"
    name = "model-per-cpu"
    summary = "pool sized by the CPU count whose workers each build a TensorFlow model"
    severity = Severity.WARNING
    default_enabled = False
    what_it_does = (
        "Reports a process pool made without a worker count (`Pool()`, `ProcessPoolExecutor()`, "
        "`processes=None`), or with `os.cpu_count()` / `multiprocessing.cpu_count()` workers (also "
        "through a variable, or less a constant: `cpu_count() - 1`), whose workers each load or "
        "build TensorFlow state (a Keras model, a SavedModel, a session): in the initializer or in "
        "the task, directly or through a function of the same file, cached per worker or not. The "
        "message quotes the memory measured per worker for the pool's start method and the CPU "
        "count of the machine running tfproc-lint. Opt-in: the right size of a pool depends on the "
        "machine, so the rule is off until selected."
    )
    why_bad = (
        "A pool with no worker count starts one worker per CPU, and every TensorFlow worker holds its "
        "own runtime and its own copy of the model: memory grows with the CPU count, not with the "
        f"work. Measured here: about {WORKER_RSS_MIB['spawn']} MiB per spawn worker and about "
        f"{WORKER_RSS_MIB['fork']} MiB per fork or forkserver worker for a small model (more with real "
        f"weights); on a {SERVER_CPUS}-CPU server that is {_size(SERVER_CPUS * WORKER_RSS_MIB['fork'])} to "
        f"{_size(SERVER_CPUS * WORKER_RSS_MIB['spawn'])} before the first task. Each worker's TensorFlow "
        "also starts its own thread "
        "pools sized for all CPUs, so the workers compete for the cores they were meant to share."
    )
    known_problems = (
        "Not reported: a worker count from the command line or configuration, even when its default "
        "is the CPU count (`argparse` `default=os.cpu_count()`); other arithmetic on the CPU count "
        "(`cpu_count() // 2`, `len(os.sched_getaffinity(0))`); an explicit count, however large; "
        "joblib's `n_jobs=-1`; a model that reaches the workers through `initargs` or task "
        "arguments instead of being built there (see TFP102); workers that build only in their tasks "
        "when the pool is given at most eight written-out tasks (`pool.map(train, [1, 2, 3])`: at most "
        "that many models); workers whose code lives in another module. The CPU count quoted is the "
        "one of the machine that runs tfproc-lint."
    )
    fix_safety = (
        "No automatic fix: how many workers fit depends on the memory of the machine the code runs "
        "on and on the model's size. Give the pool an explicit, small worker count (`Pool(2)`, "
        "`ProcessPoolExecutor(max_workers=2)`), serve one model from one process fed by queues, or "
        "use threads when the work releases the GIL (TensorFlow ops do)."
    )
    evidence = (
        "runtime_probe's benchmark measured the resident memory of every pool worker that imported "
        "TensorFlow 2.21 and built a small model (4xDense(256) on 64 inputs) in its initializer: "
        "537-543 MiB per spawn worker, 262-269 MiB per fork or forkserver worker (TensorFlow "
        "preloaded), against 525 MiB for the parent alone (docs/probe/report.md). The scenario "
        "tfp302_cpu_count_pool_bad reports the per-worker memory of a `Pool()` of spawned workers "
        "each loading a Keras model, one per CPU; its twin tfp302_explicit_count_fixed uses two."
    )
    references = (
        "https://docs.python.org/3/library/multiprocessing.html#multiprocessing.pool.Pool",
        "https://docs.python.org/3/library/concurrent.futures.html#processpoolexecutor",
        "https://www.tensorflow.org/guide/threading",
    )
    options = ("assume-start-method", "target-python")
    bad_examples = (
        Example(
            """\
            import multiprocessing as mp
            import tensorflow as tf

            model = None

            def load():
                global model
                model = tf.keras.models.load_model('model.keras')

            def score(batch):
                return model.predict_on_batch(batch)

            if __name__ == '__main__':
                with mp.get_context('spawn').Pool(initializer=load) as pool:
                    print(pool.map(score, batches))
            """,
            ("TFP302",),
            config=(("extend-select", "TFP302"),),
        ),
        Example(
            """\
            import os
            from concurrent.futures import ProcessPoolExecutor
            import tensorflow as tf

            def evaluate(shard):
                model = tf.saved_model.load('export/')
                return float(model(shard).numpy().mean())

            if __name__ == '__main__':
                with ProcessPoolExecutor(os.cpu_count()) as executor:
                    print(list(executor.map(evaluate, shards)))
            """,
            ("TFP301", "TFP302"),
            config=(("extend-select", "TFP3"),),
        ),
    )
    good_examples = (
        Example(
            """\
            import multiprocessing as mp
            import tensorflow as tf

            model = None

            def load():
                global model
                model = tf.keras.models.load_model('model.keras')

            def score(batch):
                return model.predict_on_batch(batch)

            if __name__ == '__main__':
                with mp.get_context('spawn').Pool(2, initializer=load) as pool:
                    print(pool.map(score, batches))
            """,
            config=(("extend-select", "TFP302"),),
        ),
        Example(
            """\
            import multiprocessing as mp
            import tensorflow as tf

            model = None

            def load():
                global model
                model = tf.keras.models.load_model('model.keras')

            def score(batch):
                return model.predict_on_batch(batch)

            if __name__ == '__main__':
                # opt-in: `--select TFP` alone does not run TFP302
                with mp.get_context('spawn').Pool(initializer=load) as pool:
                    print(pool.map(score, batches))
            """,
            config=(("select", "TFP"),),
        ),
    )

    def check_file(self, analysis):
        for owner in analysis.owners.values():
            sizing = cpu_sized(analysis, owner)
            if sizing is None:
                continue
            build = _built_in_each_worker(analysis, owner)
            if build is None:
                continue
            how_many, fewer = sizing
            method, why = analysis.start_method(owner.value)
            cpus = os.cpu_count() or 1
            workers = max(cpus - fewer, 1)
            yield Report(
                owner.construction,
                ModelInEveryWorker(_pool_text(analysis, owner.construction), how_many, analysis.line_of(build),
                                   analysis.code(build, 40), method, workers, cpus, fewer,
                                   outcomes.assumption(None, method, why)),
                related=((build, "each worker builds this"),),
            )


def cpu_sized(analysis, owner) -> tuple[str, int] | None:
    """How the pool is sized when it is one worker per CPU (less `fewer`), else None."""
    value = owner.value
    where = processes.POOL_SIZE_ARGUMENTS.get(value.detail)
    if value.kind not in (Kind.POOL, Kind.EXECUTOR) or where is None or value.origin is not owner.construction:
        return None
    size = argument(owner.construction, *where)
    if size is None or (isinstance(size, cst.Name) and size.value == "None"):
        return "one worker per CPU", 0
    site = owner.site
    size = _followed(analysis, size, site)
    if _is_cpu_count(analysis, size, site):
        return f"one worker per CPU (`{analysis.code(size, 40)}`)", 0
    if isinstance(size, cst.BinaryOperation) and isinstance(size.operator, cst.Subtract) \
            and _is_cpu_count(analysis, size.left, site) and isinstance(size.right, cst.Integer):
        return f"one worker per CPU less {size.right.value} (`{analysis.code(size, 40)}`)", int(size.right.value)
    return None


def _pool_text(analysis, construction: cst.Call) -> str:
    return analysis.code(construction, 60) if not construction.args else f"{analysis.code(construction.func, 56)}(...)"


def _followed(analysis, node: cst.BaseExpression, site) -> cst.BaseExpression:
    """`workers = os.cpu_count()` then `Pool(workers)`: the one value the name was given."""
    if isinstance(node, cst.Name):
        bindings = analysis.symbols.bindings_at(node.value, site.scope, site.order)
        if len(bindings) == 1 and bindings[0].kind == "assign" and bindings[0].value is not None:
            return bindings[0].value
    return node


def _is_cpu_count(analysis, node: cst.BaseExpression, site) -> bool:
    return isinstance(node, cst.Call) and \
        analysis.classifier.qualified_name(node.func, site.scope, site.order) in processes.CPU_COUNT_CALLS


def _built_in_each_worker(analysis, owner) -> cst.Call | None:
    """The first TensorFlow build in what the workers run: the initializer (run by every worker),
    then the tasks (run by every worker unless the pool is given a handful of literal tasks)."""
    few_tasks = _few_literal_tasks(analysis, owner)
    for crossing in owner.crossings:
        if crossing.callable is None or (few_tasks and crossing.route.kind is not RouteKind.INITARGS):
            continue
        worker = analysis.worker(crossing.callable, crossing.callable_scope, crossing.site.order)
        if worker.function is not None and worker.kind in RUNS_A_FUNCTION:
            build = analysis.tf.first_build(worker.function)
            if build is not None:
                return build
    return None


FEW_TASKS = 8


def _few_literal_tasks(analysis, owner) -> bool:
    """The pool runs at most FEW_TASKS tasks, all written out (`pool.map(train, [1, 2, 3])`, a name
    given such a list, single `apply`/`submit` calls): at most that many workers ever run a task."""
    tasks = 0
    for crossing in owner.crossings:
        if crossing.route.kind is RouteKind.INITARGS:
            continue
        if crossing.route.submits_one_task:
            if analysis.loops_around(crossing.call):
                return False
            tasks += 1
            continue
        items = argument(crossing.call, 1, "iterable")
        items = _followed(analysis, items, crossing.site) if items is not None else None
        if not isinstance(items, (cst.List, cst.Tuple)):
            return False
        tasks += len(items.elements)
    return tasks <= FEW_TASKS


def _memory(method: str, workers: int, cpus: int, fewer: int) -> str:
    """What the workers can hold, from the figure measured for the start method."""
    mib = WORKER_RSS_MIB.get(method)
    if mib is None:
        low, high = min(WORKER_RSS_MIB.values()), max(WORKER_RSS_MIB.values())
        per_worker, mib = f"{low}-{high} MiB per worker by start method (measured)", high
    else:
        per_worker = f"about {mib} MiB per {method} worker (measured)"
    return (f"{per_worker}, so memory can reach {_size(workers * mib)} with the {cpus} CPUs here ({workers} x {mib} "
            f"MiB) and {_size((SERVER_CPUS - fewer) * mib)} on a {SERVER_CPUS}-CPU server")
