"""TFP201: the parent starts TensorFlow's runtime, then forks workers that use TensorFlow."""

from __future__ import annotations

from tfproc_lint.analysis import outcomes
from tfproc_lint.analysis.file_analysis import FileAnalysis
from tfproc_lint.analysis.kinds import Kind
from tfproc_lint.analysis.workers import Owner
from tfproc_lint.fixes.common import quoted_names
from tfproc_lint.fixes.spawn_context import UseSpawnContext
from tfproc_lint.knowledge.tensorflow import GRAPH_FORK_RATE
from tfproc_lint.rules.base import Example, Finding, Report, Rule, finding, shown, worded


@finding
class ForkedAfterRuntimeStart(Finding):
    noun: str = worded()  # the workers' maker: "Pool", "ProcessPoolExecutor", ...
    line: int = shown()  # where the runtime started
    reason: str = worded()  # what started it
    remedy: str = worded()
    import_time: str = worded()  # how the start runs at import, if it does
    assumption: str = worded()

    def message(self) -> str:
        return (f"{self.noun} forked after the parent started TensorFlow's runtime (line {self.line}: "
                f"{self.reason}): workers that run TensorFlow can hang; {self.remedy}{self.import_time}"
                f"{self.assumption}")


@finding
class ForkedAfterCallerStartedRuntime(Finding):
    noun: str = worded()
    function: str  # the function of this module that another module calls after its start
    start: str = shown()  # where the runtime started there: "main.py:7"
    reason: str = worded()  # what started it
    call: str = shown()  # where that module calls the function: "main.py:9"
    remedy: str = worded()
    assumption: str = worded()

    def message(self) -> str:
        return (f"{self.noun} forked after the parent started TensorFlow's runtime in another module ({self.start}: "
                f"{self.reason}), which then calls {self.function}() ({self.call}): workers that run TensorFlow "
                f"can hang; {self.remedy}, or call {self.function}() before the runtime starts{self.assumption}")


@finding
class ForkedAfterGraphBuilding(Finding):
    noun: str = worded()
    reason: str = worded()  # what built the TF1 graph
    line: int = shown()
    remedy: str = worded()
    assumption: str = worded()

    def message(self) -> str:
        return (f"{self.noun} forked after the parent {self.reason} on line {self.line}: workers that run "
                f"TensorFlow can hang, rarely ({GRAPH_FORK_RATE}; a thread TensorFlow starts for graph building is "
                f"not in the child); {self.remedy}{self.assumption}")


class RuntimeInitialisedBeforeFork(Rule):
    code = "TFP201"
    name = "runtime-initialised-before-fork"
    summary = "TensorFlow runtime initialised in the parent before forking TensorFlow workers"
    fix_availability = "sometimes"
    what_it_does = (
        "Follows the parent's statements in execution order (through calls to functions, methods and "
        "constructors of the same file, and through control flow: a branch that returns, raises, exits "
        "or breaks out of a loop does not reach what follows it, nor does an `if` whose test is `False` or "
        "a module flag bound once to `False`; a function the file never calls is walked "
        "as an entry point of its own, and a class's `__init__` with the methods it calls on its instance, "
        "for a class constructed in another module, and its other methods from the state its constructor "
        "leaves) and reports a process started with the "
        "fork start method after the parent may have started TensorFlow's runtime, when the workers run "
        "TensorFlow. Process starts: `Pool`, `Process.start()`, `ProcessPoolExecutor`, pools made from "
        "context or `Pool` subclasses, `os.fork()`, joblib's \"multiprocessing\" backend, and Keras "
        "data workers (`use_multiprocessing=True`). The runtime starts with a session (also run as "
        "`tensor.eval(session=...)` or `op.run(session=...)`), an eager op, a `tf.data` dataset made "
        "in eager mode, a Keras model built, loaded or called, a `tf.function` call, a loaded SavedModel, a "
        "`tf.distribute` strategy, a device query that creates the devices "
        "(`device_lib.list_local_devices()`, `tf.test.is_gpu_available()`, "
        "`tf.config.list_logical_devices()`), or `tf.Tensor` results unpickled from pool workers. In "
        "TF1 graph mode (eager execution off, the TF1 API, `with graph.as_default():`) ops and "
        "variables only build graph nodes: there a session starts it. A fork after the parent built a TF1 "
        "graph (`tf.Graph()`, a placeholder, graph-mode ops or variables) but started nothing is reported "
        "too, as one that can hang rarely, when the workers' own code runs TensorFlow (a session or an op); "
        "workers that only receive graph objects, or run no TensorFlow, are not. Workers run TensorFlow when "
        "their code starts or uses the runtime, or when TensorFlow state reaches them and they use "
        "it. The start method is read from `get_context(...)`, `mp_context=`, `set_start_method(...)` "
        "in the file, then the configuration; without any, fork (the Linux default before Python "
        "3.14) is assumed and the message says so."
    )
    why_bad = (
        "TensorFlow creates its intra-op and inter-op thread pools lazily and process-wide. After "
        "`fork()` the child has the pools' bookkeeping but none of their threads, so the first op "
        "large enough to be handed to a pool waits forever: a silent hang, no error, 0% CPU. Small "
        "test tensors run inline and pass; production shapes hang (the size depends on the op). "
        "Importing TensorFlow is safe; starting the runtime is not. Building a TF1 graph without running "
        "it starts no thread pool, but it starts a thread of its own (`tf_graph_runner`) that the child "
        "does not get, and now and then a forked child's session run hangs: rare, but a job that forks "
        "every night will meet it. "
        "(tensorflow/tensorflow#5448, #51832, openai/baselines#756.)"
    )
    known_problems = (
        "Other modules of the project are read through their summaries (project analysis): an "
        "imported worker that runs TensorFlow, a helper or an import that starts the runtime, a "
        "start method an imported module sets at import. A function of this module that another "
        "project module calls after its runtime may have started (a function, a constructor, a "
        "method called on an object that module made) is walked from that start: "
        "the finding is at the workers, naming the start and the call in the other module. A start "
        "method set by an entry point that imports this module is not seen, unless the module has no "
        "`if __name__ == \"__main__\":` block or that entry point calls the forking function: set "
        "`assume-start-method` for such projects. "
        "Third-party modules count only through what tfproc-lint knows of their APIs."
    )
    fix_safety = (
        "The fix creates the workers from `multiprocessing.get_context(\"spawn\")` (adding "
        "`mp_context=` to a `ProcessPoolExecutor`, and the import when needed). It is unsafe: under "
        "spawn every argument and the worker function must be picklable, workers no longer see "
        "globals the parent set after import, the main module needs an `if __name__ == "
        "\"__main__\":` guard, and each worker pays the TensorFlow import (seconds). No fix is "
        "offered for workers started at module level without that guard, for `Process` "
        "subclasses, for a worker defined in another module (a rewrite of this file cannot check "
        "what spawn re-imports there), or for an explicit `get_context(\"fork\")`: manual edit "
        "required. In a "
        "notebook, whose cells spawned children never re-import, no guard is needed, but a worker "
        "the notebook defines cannot be imported by them (TFP204): the message says to move it into "
        "a module first, and no fix is offered."
    )
    evidence = (
        "After a session, an eager op or a Keras `predict` in the parent, fork workers doing 512x512 "
        "TensorFlow work hang until killed (pool, executor and `Process`); the spawn twins, the "
        "auto-fixed scenarios and importing TensorFlow alone before fork return the right result. "
        "Matmuls up to 256x256 still ran inline here; 384x384 and up hung. "
        "After TF1 graph building with no session (`tf.Graph()` and a placeholder), a fork `Pool(2)` whose "
        "two tasks each run a small graph in a new Session hung in 1 of 83 runs (two programs at a time "
        "next to three CPU hogs, load 3 to 28 on 2 cores; a worker stuck in `tensorflow::Executor::Run` "
        "under `DirectSession::Run`), and in 2 of 84 in an earlier series; after the import alone, 0 of 42 "
        "and 0 of 116 (`python -m runtime_probe.fork_hazard`, docs/probe/fork-hazard.md). A probe "
        "scenario runs once and expects one outcome, so it cannot show a hang this rare: the rate comes "
        "from hundreds of runs of that script."
    )
    references = (
        "https://github.com/tensorflow/tensorflow/issues/5448",
        "https://github.com/tensorflow/tensorflow/issues/51832",
        "https://github.com/openai/baselines/issues/756",
        "https://docs.python.org/3/whatsnew/3.14.html#multiprocessing",
    )
    options = ("assume-start-method", "target-python")
    bad_examples = (
        Example(
            """\
            import multiprocessing as mp
            import tensorflow as tf

            def shard_sum(seed):
                return float(tf.reduce_sum(tf.random.normal((1024, 1024), seed=seed)))

            if __name__ == '__main__':
                warmup = tf.matmul(tf.ones((512, 512)), tf.ones((512, 512)))
                with mp.Pool(2) as pool:
                    print(pool.map(shard_sum, range(4)))
            """,
            ("TFP201",),
            fixed="""\
            import multiprocessing as mp
            import tensorflow as tf

            def shard_sum(seed):
                return float(tf.reduce_sum(tf.random.normal((1024, 1024), seed=seed)))

            if __name__ == '__main__':
                warmup = tf.matmul(tf.ones((512, 512)), tf.ones((512, 512)))
                with mp.get_context("spawn").Pool(2) as pool:
                    print(pool.map(shard_sum, range(4)))
            """,
        ),
    )
    good_examples = (
        Example(
            """\
            import multiprocessing as mp
            import tensorflow as tf

            def shard_sum(seed):
                return float(tf.reduce_sum(tf.random.normal((1024, 1024), seed=seed)))

            if __name__ == '__main__':
                warmup = tf.matmul(tf.ones((512, 512)), tf.ones((512, 512)))
                with mp.get_context('spawn').Pool(2) as pool:
                    print(pool.map(shard_sum, range(4)))
            """
        ),
        Example(
            """\
            import multiprocessing as mp
            import tensorflow as tf

            def shard_sum(seed):
                return float(tf.reduce_sum(tf.random.normal((1024, 1024), seed=seed)))

            if __name__ == '__main__':
                warmup = tf.matmul(tf.ones((512, 512)), tf.ones((512, 512)))
                with mp.Pool(2) as pool:
                    print(pool.map(shard_sum, range(4)))
            """,
            config=(("target-python", "3.14"),),
        ),
    )

    def check_file(self, analysis: FileAnalysis):
        forked = [owner for owner in analysis.owners.values()
                  if analysis.start_method(owner.value)[0] == "fork" and analysis.tf.owner_runs_tensorflow(owner)]
        if not forked:
            return
        walk = analysis.execution
        for owner in sorted(forked, key=lambda o: analysis.symbols.order_of_node.get(o.construction, 0)):
            started = next((walk.started_before(call) for call in owner.fork_calls if walk.started_before(call)), None)
            if started is None:
                found = list(_after_caller_start(owner, analysis))
                yield from found or _after_graph_building(owner, analysis)
                continue
            method, why = analysis.start_method(owner.value)
            line = analysis.line_of(started.call)
            yield Report(
                owner.construction,
                ForkedAfterRuntimeStart(owner.noun, line, started.reason, _remedy(owner, analysis),
                                        _import_time_call(analysis, started.call),
                                        outcomes.assumption(None, method, why)),
                fix=UseSpawnContext(owner),
                related=((started.call, f"TensorFlow runtime started here: {started.reason}"),
                         *analysis.tf.external_related(started.call)),
            )


def _import_time_call(analysis: FileAnalysis, start) -> str:
    """The other way out when an imported project module's import-time call starts the runtime
    through yet another module: that call, named, is what must change."""
    effect = analysis.tf.external_starts.get(start)
    if effect is None or effect.trigger is None:
        return ""
    return f", or move the call at {effect.trigger.place} into a function that runs after the fork"


def _after_caller_start(owner: Owner, analysis: FileAnalysis):
    """A fork in a function that another project module calls after its runtime may have started."""
    walk = analysis.caller_walk
    if walk is None:
        return
    started = next((walk.started_before(call) for call in owner.fork_calls if walk.started_before(call)), None)
    caller = started.caller if started is not None else None
    if caller is None:
        return
    method, why = analysis.start_method(owner.value)
    named_here = owner.value.method not in (None, "default") or analysis.file_start_method
    if not named_here and caller.start_method is not None:
        if caller.start_method != "fork":
            return  # the calling module sets spawn or forkserver: the default context is that
        why = ""
    yield Report(
        owner.construction,
        ForkedAfterCallerStartedRuntime(owner.noun, caller.function.removesuffix(".__init__"), str(caller.start.place),
                                        caller.start.reason, str(caller.call), _remedy(owner, analysis),
                                        outcomes.assumption(None, method, why)),
        fix=UseSpawnContext(owner),
        related=((caller.start.place, f"TensorFlow runtime started here: {caller.start.reason}"),
                 (caller.call, f"calls {caller.function.removesuffix('.__init__')}() after it")),
    )


def _after_graph_building(owner: Owner, analysis: FileAnalysis):
    """A fork after TF1 graph building (no session yet) whose workers run TensorFlow: rarely hangs."""
    walk = analysis.graph_walk
    built = next((walk.started_before(call) for call in owner.fork_calls if walk.started_before(call)), None)
    if built is None or not analysis.tf.owner_code_runs_tensorflow(owner) or analysis.tf.sends_tf1_state_pickled():
        return
    method, why = analysis.start_method(owner.value)
    yield Report(
        owner.construction,
        ForkedAfterGraphBuilding(owner.noun, built.reason, analysis.line_of(built.call), _remedy(owner, analysis),
                                 outcomes.assumption(None, method, why)),
        fix=UseSpawnContext(owner),
        related=((built.call, f"TF1 graph built here: {built.reason}"),),
    )


def _remedy(owner: Owner, analysis: FileAnalysis) -> str:
    remedy = _remedy_in_a_file(owner)
    defined = analysis.workers_defined_in_notebook(owner)
    if defined and "get_context" in remedy:
        # A notebook has no `if __name__ == "__main__":` to speak of, and spawned children cannot
        # import what it defines (TFP204): the worker must live in a module first.
        remedy = remedy.replace("create it from", f"create the {owner.noun} from", 1)
        return f"move {quoted_names(defined)} into a module (a .py file beside the notebook) and import it; {remedy}"
    return remedy


def _remedy_in_a_file(owner: Owner) -> str:
    detail = owner.value.detail
    if detail == "os.fork":
        return "fork before TensorFlow starts, or start a process from multiprocessing.get_context(\"spawn\")"
    if detail == "keras workers":
        return "keep TensorFlow out of the dataset's __getitem__, or set use_multiprocessing=False"
    if owner.value.kind is Kind.PARALLEL:
        return "use joblib's default loky backend"
    if owner.value.kind is Kind.EXECUTOR:
        return "pass mp_context=multiprocessing.get_context(\"spawn\") (or \"forkserver\")"
    return "create it from multiprocessing.get_context(\"spawn\") (or \"forkserver\")"
