"""TFP201: the parent starts TensorFlow's runtime, then forks workers that use TensorFlow."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from tfproc_lint.analysis import outcomes
from tfproc_lint.analysis.file_analysis import FileAnalysis, Owner
from tfproc_lint.analysis.symbols import FunctionInfo
from tfproc_lint.analysis.walk import calls_in_evaluation_order, is_main_guard
from tfproc_lint.fixes.spawn_context import UseSpawnContext
from tfproc_lint.rules.base import Example, Report, Rule

MAX_CALL_DEPTH = 4


@dataclass(frozen=True)
class Initialised:
    call: cst.Call
    reason: str


class RuntimeInitialisedBeforeFork(Rule):
    code = "TFP201"
    name = "runtime-initialised-before-fork"
    summary = "TensorFlow runtime initialised in the parent before forking TensorFlow workers"
    fix_availability = "sometimes"
    what_it_does = (
        "Follows the parent's statements in execution order (through calls to functions of the same "
        "file) and reports a pool, process or executor started with the fork start method after the "
        "parent created a session, ran an eager op, built, loaded or called a Keras model, called a "
        "`tf.function` or loaded a SavedModel, when the workers use TensorFlow. The start method is "
        "read from `get_context(...)`, `mp_context=`, `set_start_method(...)` in the file, then the "
        "configuration (`assume-start-method`, `target-python`, `requires-python`); without any, "
        "fork (the Linux default before Python 3.14) is assumed and the message says so."
    )
    why_bad = (
        "TensorFlow creates its intra-op and inter-op thread pools lazily and process-wide. After "
        "`fork()` the child has the pools' bookkeeping but none of their threads, so the first op "
        "large enough to be handed to a pool waits forever: a silent hang, no error, 0% CPU. Small "
        "test tensors run inline and pass; production shapes hang (the size depends on the op). "
        "Importing TensorFlow, or "
        "building a `tf.Graph` without running it, is safe; starting the runtime is not. "
        "(tensorflow/tensorflow#5448, #51832, openai/baselines#756.)"
    )
    known_problems = (
        "Workers whose code lives in another module, and start methods set in another module, "
        "are not seen: set `assume-start-method` for projects that set it in their entry point."
    )
    fix_safety = (
        "The fix creates the workers from `multiprocessing.get_context(\"spawn\")` (adding "
        "`mp_context=` to a `ProcessPoolExecutor`, and the import when needed). It is unsafe: under "
        "spawn every argument and the worker function must be picklable, workers no longer see "
        "globals the parent set after import, the main module needs an `if __name__ == "
        "\"__main__\":` guard, and each worker pays the TensorFlow import (seconds). No fix is "
        "offered for workers started at module level without that guard, for `Process` "
        "subclasses, or for an explicit `get_context(\"fork\")`: manual edit required."
    )
    evidence = (
        "After a session, an eager op or a Keras `predict` in the parent, fork workers doing 512x512 "
        "TensorFlow work hang until killed (pool, executor and `Process`); the spawn twins, the "
        "auto-fixed scenarios and importing TensorFlow alone before fork return the right result. "
        "Matmuls up to 256x256 still ran inline here; 384x384 and up hung."
    )
    references = (
        "https://github.com/tensorflow/tensorflow/issues/5448",
        "https://github.com/tensorflow/tensorflow/issues/51832",
        "https://github.com/openai/baselines/issues/756",
        "https://docs.python.org/3/whatsnew/3.14.html#multiprocessing",
    )
    bad_examples = (
        Example(
            "import multiprocessing as mp\n"
            "import tensorflow as tf\n\n"
            "def shard_sum(seed):\n"
            "    return float(tf.reduce_sum(tf.random.normal((1024, 1024), seed=seed)))\n\n"
            "if __name__ == '__main__':\n"
            "    warmup = tf.matmul(tf.ones((512, 512)), tf.ones((512, 512)))\n"
            "    with mp.Pool(2) as pool:\n"
            "        print(pool.map(shard_sum, range(4)))\n",
            ("TFP201",),
        ),
    )
    good_examples = (
        Example(
            "import multiprocessing as mp\n"
            "import tensorflow as tf\n\n"
            "def shard_sum(seed):\n"
            "    return float(tf.reduce_sum(tf.random.normal((1024, 1024), seed=seed)))\n\n"
            "if __name__ == '__main__':\n"
            "    warmup = tf.matmul(tf.ones((512, 512)), tf.ones((512, 512)))\n"
            "    with mp.get_context('spawn').Pool(2) as pool:\n"
            "        print(pool.map(shard_sum, range(4)))\n"
        ),
        Example(
            "import multiprocessing as mp\n"
            "import tensorflow as tf\n\n"
            "def shard_sum(seed):\n"
            "    return float(tf.reduce_sum(tf.random.normal((1024, 1024), seed=seed)))\n\n"
            "if __name__ == '__main__':\n"
            "    warmup = tf.matmul(tf.ones((512, 512)), tf.ones((512, 512)))\n"
            "    with mp.Pool(2) as pool:\n"
            "        print(pool.map(shard_sum, range(4)))\n",
            config=(("target-python", "3.14"),),
        ),
    )

    def check_file(self, analysis: FileAnalysis):
        forked = [owner for owner in analysis.owners.values()
                  if analysis.start_method(owner.value)[0] == "fork"
                  and any(analysis.tf.worker_uses_tensorflow(worker) for worker in owner.workers)]
        if not forked:
            return
        walk = _ExecutionWalk(analysis, forked)
        for owner, initialised in walk.run():
            method, why = analysis.start_method(owner.value)
            line = analysis.line_of(initialised.call)
            what = {"POOL": "pool", "EXECUTOR": "executor", "PROCESS": "process"}[owner.value.kind.name]
            yield Report(
                owner.construction,
                f"fork-started {what} after the parent initialised TensorFlow (line {line}: "
                f"{initialised.reason}): its TensorFlow workers hang; create it from "
                f"get_context(\"spawn\") or \"forkserver\"{outcomes.assumption(None, method, why)}",
                fix=UseSpawnContext(owner),
                related=((initialised.call, f"TensorFlow runtime started here: {initialised.reason}"),),
            )


class _ExecutionWalk:
    """Walks the parent's statements in order, tracking whether the runtime is initialised."""

    def __init__(self, analysis: FileAnalysis, forked: list[Owner]) -> None:
        self.analysis = analysis
        self.usage = analysis.tf
        self.graph_mode = self.usage.graph_mode()
        self.fork_points: dict[cst.Call, Owner] = {}
        for owner in forked:
            for call in owner.fork_calls:
                self.fork_points.setdefault(call, owner)
        self.found: dict[cst.Call, tuple[Owner, Initialised]] = {}
        self._summaries: dict[tuple[cst.FunctionDef, bool], Initialised | None] = {}
        self._active: set[cst.FunctionDef] = set()

    def run(self) -> list[tuple[Owner, Initialised]]:
        module = self.analysis.module
        self.block(module.body, None, graph_building=False, depth=0)
        # Functions may be entry points (console scripts, absl.app.run): walk each one, starting
        # from what the module level did on import (the `__main__` block excluded).
        on_import = self.block([s for s in module.body if not is_main_guard(s)], None, False, MAX_CALL_DEPTH)
        for info in self.analysis.symbols.functions.values():
            self.function(info, on_import, depth=1)
        return sorted(self.found.values(), key=lambda pair: self.analysis.symbols.order_of_node[pair[0].construction])

    # statements ----------------------------------------------------------------------------------
    def block(self, statements, state, graph_building, depth):
        for statement in statements:
            state = self.statement(statement, state, graph_building, depth)
        return state

    def statement(self, node, state, graph_building, depth):
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            return state
        if isinstance(node, cst.If):
            state = self.expression(node.test, state, graph_building, depth)
            then = self.block(node.body.body, state, graph_building, depth)
            otherwise = state
            if node.orelse is not None:
                otherwise = self.statement(node.orelse, state, graph_building, depth) if isinstance(
                    node.orelse, cst.If) else self.block(node.orelse.body.body, state, graph_building, depth)
            return then or otherwise
        if isinstance(node, cst.With):
            building = graph_building
            for item in node.items:
                state = self.expression(item.item, state, graph_building, depth)
                site = self.analysis.site(item.item) if isinstance(item.item, cst.Call) else None
                if site is not None and self.usage.is_graph_context(item.item, site.scope, site.order):
                    building = True
            return self.block(node.body.body, state, building, depth)
        if isinstance(node, (cst.For, cst.While)):
            head = node.iter if isinstance(node, cst.For) else node.test
            state = self.expression(head, state, graph_building, depth)
            state = self.block(node.body.body, state, graph_building, depth)
            if node.orelse is not None:
                state = self.block(node.orelse.body.body, state, graph_building, depth)
            return state
        if isinstance(node, cst.Try):
            state = self.block(node.body.body, state, graph_building, depth)
            for handler in node.handlers:
                state = self.block(handler.body.body, state, graph_building, depth) or state
            for part in (node.orelse, node.finalbody):
                if part is not None:
                    state = self.block(part.body.body, state, graph_building, depth)
            return state
        if isinstance(node, cst.SimpleStatementLine):
            for small in node.body:
                state = self.expression(small, state, graph_building, depth)
            return state
        if isinstance(node, cst.BaseCompoundStatement) and hasattr(node, "body"):
            return self.block(getattr(node.body, "body", ()), state, graph_building, depth)
        return state

    def expression(self, node, state, graph_building, depth):
        for call in calls_in_evaluation_order(node):
            state = self.call(call, state, graph_building, depth)
        return state

    # calls ---------------------------------------------------------------------------------------
    def call(self, call: cst.Call, state, graph_building, depth):
        owner = self.fork_points.get(call)
        if owner is not None and state is not None:
            self.check_fork(owner, state)
        site = self.analysis.site(call)
        if site is not None and depth < MAX_CALL_DEPTH:
            callee = self.analysis.callee(call, site)
            if callee is not None:
                after = self.function(callee, state, depth + 1)
                state = state or after
        if state is None:
            reason = self.usage.initialises_runtime(call, graph_building, self.graph_mode)
            if reason is not None:
                state = Initialised(call, reason)
        return state

    def function(self, info: FunctionInfo, state, depth) -> Initialised | None:
        """Walk a called function; returns the initialisation it performs (or passes through)."""
        key = (info.node, state is not None)
        if key in self._summaries:
            return self._summaries[key] if state is None else state
        if info.node in self._active or depth > MAX_CALL_DEPTH:
            return state
        self._active.add(info.node)
        try:
            result = self.block(info.node.body.body, state, False, depth)
        finally:
            self._active.discard(info.node)
        self._summaries[key] = result
        return result

    def check_fork(self, owner: Owner, state: Initialised) -> None:
        self.found.setdefault(owner.construction, (owner, state))

