"""Which calls start TensorFlow's runtime, build per-task state, and which workers run TensorFlow.

Importing TensorFlow, building a `tf.Graph`, listing physical devices or configuring (`tf.config.*`)
does not start the runtime's thread pools; creating a session, running an eager op, building or
calling a Keras model, calling a `tf.function`, loading a SavedModel or listing logical devices
does (runtime_probe's TFP201 scenarios). In TensorFlow 1 graph mode, ops and variables only add
graph nodes: there, a session (and what runs one) starts the runtime. Building a graph starts no thread
pool, but it starts a thread of its own (`builds_graph`): a fork after it can hang, rarely
(runtime_probe/fork_hazard.py).
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

import libcst as cst

from tfproc_lint.analysis.kinds import TF1_STATE, Kind
from tfproc_lint.analysis.project_calls import project_callee
from tfproc_lint.analysis.routes import Pickling, RouteKind
from tfproc_lint.analysis.project_names import Effect
from tfproc_lint.analysis.symbols import FunctionInfo, Scope
from tfproc_lint.analysis.values import argument
from tfproc_lint.analysis.walk import calls_in_evaluation_order, iter_tree
from tfproc_lint.analysis.workers import WorkerKind
from tfproc_lint.knowledge import tensorflow
from tfproc_lint.records import record

if TYPE_CHECKING:
    from tfproc_lint.analysis.module_facts import ModuleFacts
    from tfproc_lint.analysis.workers import Owner, Worker

_BUILDER_KINDS = frozenset({Kind.SESSION, Kind.KERAS_MODEL, Kind.SAVED_MODEL})
_GRAPH_BUILDERS = frozenset({"tensorflow.Graph", "tensorflow.train.import_meta_graph"})
MAX_WORKER_DEPTH = 3


@record
class ExecutionMode:
    """How TensorFlow ops behave in this module: eager (TF2) or graph building (TF1)."""

    graph: bool
    why: str = ""  # e.g. "tf.compat.v1.disable_eager_execution() on line 12"


class TensorFlowUsage:
    def __init__(self, analysis: "ModuleFacts") -> None:
        self.analysis = analysis
        self.classifier = analysis.classifier
        self._runs: dict[cst.CSTNode, bool] = {}
        # Calls and imports that start the runtime in another project module: where it starts there.
        self.external_starts: dict[cst.CSTNode, Effect] = {}

    # execution mode ---------------------------------------------------------------------------
    @cached_property
    def mode(self) -> ExecutionMode:
        """Graph mode when the module switches eager execution off or is written against the TF1
        API (placeholders, variable scopes, `tf.contrib`, `tf.Session` without `compat.v1`)."""
        analysis = self.analysis
        for site, name in analysis.calls.resolved():
            func = site.node.func
            if name is None or not name.startswith("tensorflow."):
                continue
            spelled = self.classifier.qualified_name(func, site.scope, site.order, raw=True) or ""
            if (name in tensorflow.GRAPH_MODE_SWITCHES or name in tensorflow.TF1_GRAPH_API
                    or name.startswith(tensorflow.TF1_ONLY_PREFIXES) or spelled in tensorflow.TF1_ONLY_SPELLINGS):
                return ExecutionMode(True, f"{analysis.code(func, 50)}() on line {analysis.line_of(site.node)}")
        return ExecutionMode(False)

    def is_graph_context(self, item: cst.BaseExpression, scope: Scope, order: int) -> bool:
        """`with graph.as_default():` builds graph nodes instead of running ops."""
        if isinstance(item, cst.Call) and isinstance(item.func, cst.Attribute) and item.func.attr.value == "as_default":
            return self.classifier.classify(item.func.value, scope, order).kind is Kind.GRAPH
        return False

    # runtime initialisation -------------------------------------------------------------------
    def initialises_runtime(self, call: cst.Call, graph_building: bool) -> str | None:
        """Why this call starts TensorFlow's runtime in the calling process, or None."""
        site = self.analysis.site(call)
        if site is None:
            return None
        classifier = self.classifier
        graph = graph_building or self.mode.graph
        value = classifier.classify(call, site.scope, site.order)
        if value.origin is call:
            if value.kind is Kind.SESSION:
                return "creates a session"
            if value.kind is Kind.SAVED_MODEL:
                return "loads a SavedModel"
            if value.kind is Kind.KERAS_MODEL and self._builds_weights(value, call):
                if "load" in value.detail:
                    return "loads a Keras model"
                if not graph:
                    return "builds a Keras model"
        func = call.func
        if isinstance(func, cst.Attribute):
            receiver = classifier.classify(func.value, site.scope, site.order)
            method = func.attr.value
            if receiver.kind is Kind.SESSION and method in tensorflow.SESSION_RUNS:
                return "runs a session"
            if receiver.kind is Kind.KERAS_MODEL and method in tensorflow.MODEL_RUNS:
                return f"calls model.{method}()"
            if not graph and method == "add" and self._adds_input_layer(receiver, call):
                return "builds a Sequential model (add() of a layer with input_shape)"
            if receiver.kind is Kind.SAVED_MODEL:
                return "calls a loaded SavedModel"
            if receiver.kind is Kind.ESTIMATOR and method in tensorflow.ESTIMATOR_RUNS:
                return f"runs an Estimator ({method})"
            if method in tensorflow.GRAPH_RUNS and (receiver.kind is Kind.GRAPH or self._given_session(call, site)):
                return f"runs a session ({self.analysis.code(func, 40)}())"
        name = classifier.qualified_name(func, site.scope, site.order)
        imported = project_callee(self.analysis, call, site)
        if imported is not None and imported.starts is not None:
            self.external_starts[call] = imported.starts
            called = name or self.analysis.code(func, 40)
            return f"calls {called}(), which {imported.starts.reason} ({imported.starts.place})"
        if name in tensorflow.RUNTIME_QUERIES:
            return f"lists devices ({self.analysis.code(func, 40)}())"
        if name in tensorflow.RUNTIME_STRATEGIES:
            return f"creates a {_short(name)}, which creates the devices"
        if self._receives_tensors(call):
            return "unpickles tf.Tensor results from the workers, which runs an op"
        if graph:
            return None
        if value.origin is call and value.kind is Kind.DATASET and value.detail in tensorflow.DATASETS_STARTING_RUNTIME:
            return f"creates a tf.data dataset ({_short(value.detail)}), which runs ops eagerly"
        callee = classifier.classify(func, site.scope, site.order)
        if callee.kind is Kind.KERAS_MODEL:
            return "calls a Keras model"
        if callee.kind is Kind.TF_FUNCTION and callee.origin is not call:
            return "calls a tf.function"
        if name and name.startswith("tensorflow.") and is_eager_op(name[len("tensorflow."):]):
            return f"runs an eager op ({_short(name)})"
        return None

    def builds_graph(self, call: cst.Call, graph_building: bool) -> str | None:
        """Why this call builds a TF1 graph in the calling process (its first graph starts a thread of
        TensorFlow's, `tf_graph_runner`, that a forked child does not get), or None. A detector for
        ExecutionWalk (`FileAnalysis.graph_walk`)."""
        site = self.analysis.site(call)
        if site is None:
            return None
        name = self.classifier.qualified_name(call.func, site.scope, site.order)
        if name is None or not name.startswith("tensorflow."):
            return None
        spelled = f"{self.analysis.code(call.func, 40)}()"
        if name in tensorflow.GRAPH_BUILDERS:
            return f"built a TF1 graph ({spelled})"
        graph = graph_building or self.mode.graph
        if graph and (name in tensorflow.GRAPH_MODE_BUILDERS or is_eager_op(name[len("tensorflow."):])):
            return f"built TF1 graph nodes ({spelled})"
        return None

    def import_starts_runtime(self, statement: cst.Import | cst.ImportFrom) -> str | None:
        """Why importing these project modules starts TensorFlow's runtime (their own import
        runs their top-level code), or None."""
        return self.import_effect(statement, "on_import")

    def import_effect(self, statement: cst.Import | cst.ImportFrom, attribute: str) -> str | None:
        """Why importing these project modules has the effect `attribute` of their summaries
        ("on_import": starts the runtime; "fixes_context": fixes the default start method), or None."""
        project = self.analysis.project
        found = project.import_effect(statement, attribute, str(self.analysis.path)) if project is not None else None
        if found is None:
            return None
        summary, effect = found
        self.external_starts[statement] = effect
        if attribute == "fixes_context":
            return f"imports {summary.module}, whose import fixed it: {effect.reason} ({effect.place})"
        if effect.trigger is not None:  # through a call at import to yet another module
            return (f"imports {summary.module}, whose import {effect.trigger.reason} ({effect.trigger.place}), "
                    f"which {effect.reason} ({effect.place})")
        return f"imports {summary.module}, whose import {effect.reason} ({effect.place})"

    def external_related(self, node: cst.CSTNode, label: str = "TensorFlow runtime starts here") -> tuple:
        """The place in another module where what happens at `node` (a call or an import: a
        runtime start, a start method fixed) happens, as a finding's related place: ((Place, text),)
        or (); through an import whose module's import-time call leads there, that call first."""
        effect = self.external_starts.get(node)
        if effect is None:
            return ()
        starts = (effect.place, f"{label}: {effect.reason}")
        if effect.trigger is None:
            return (starts,)
        return ((effect.trigger.place, "runs at import: move this call into a function"), starts)

    def _given_session(self, call: cst.Call, site) -> bool:
        """`tensor.eval(session=sess)`, `op.run(feed, sess)`: a session is named to run the graph."""
        index, name = tensorflow.GRAPH_RUN_SESSION
        given = argument(call, index, name)
        return given is not None and self.classifier.classify(given, site.scope, site.order).kind is Kind.SESSION

    def _receives_tensors(self, call: cst.Call) -> bool:
        """`pool.map(task, ...)` whose task (a function of this file) returns a tf.Tensor."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in tensorflow.SYNCHRONOUS_POOL_CALLS):
            return False
        crossing = self.analysis.crossing_of(call)
        if crossing is None or crossing.callable is None or crossing.route.kind is not RouteKind.POOL_TASK:
            return False
        worker = self.analysis.worker(crossing.callable, crossing.callable_scope, crossing.site.order)
        if worker.function is None:
            return False
        for returned in worker.function.returns:
            value = returned.value
            site = self.analysis.site(value) if isinstance(value, cst.Call) else None
            if site is not None:
                name = self.classifier.qualified_name(value.func, site.scope, site.order)
                if name and name.startswith("tensorflow.") and is_eager_op(name[len("tensorflow."):]):
                    return True
        return False

    def _builds_weights(self, value, call: cst.Call) -> bool:
        if value.detail.startswith(tensorflow.KERAS_APPLICATIONS):
            return True
        if value.detail in tensorflow.KERAS_BUILDS_AT_ONCE:
            return bool(call.args)
        if value.detail in tensorflow.KERAS_SEQUENTIAL:
            text = self.analysis.module.code_for_node(call)
            return "Input" in text or "input_shape" in text
        return False

    @staticmethod
    def _adds_input_layer(receiver, call: cst.Call) -> bool:
        """`model.add(Dense(4, input_shape=(3,)))` on a `Sequential()`: the model builds its weights
        at once (Keras 2 and 3), as `Sequential([Dense(4, input_shape=(3,))])` does."""
        if receiver.kind is not Kind.KERAS_MODEL or receiver.detail not in tensorflow.KERAS_SEQUENTIAL:
            return False
        layer = argument(call, 0, "layer")
        return isinstance(layer, cst.Call) and any(
            arg.keyword is not None and arg.keyword.value == "input_shape" for arg in layer.args
        )

    # per-task builders (TFP301) ---------------------------------------------------------------
    def builds_state(self, call: cst.Call) -> bool:
        site = self.analysis.site(call)
        if site is None:
            return False
        value = self.classifier.classify(call, site.scope, site.order)
        if value.origin is not call:
            return False
        if value.kind in _BUILDER_KINDS:
            return True
        return value.kind is Kind.GRAPH and value.detail in _GRAPH_BUILDERS

    def first_build(self, info: FunctionInfo, depth: int = 0) -> cst.Call | None:
        """The first call of `info` that builds TensorFlow state, directly or through a function of
        this file, cached or not: what every process running `info` ends up holding (TFP302). A
        session, model or SavedModel is preferred to the bare `tf.Graph()` it may be built into."""
        found = []
        for call in calls_in_evaluation_order(info.node.body):
            site = self.analysis.site(call)
            if self.builds_state(call):
                value = self.classifier.classify(call, site.scope, site.order)
                found.append((value.kind is Kind.GRAPH, call))
                continue
            callee = self.analysis.callee(call, site) if site is not None and depth < MAX_WORKER_DEPTH else None
            if callee is not None and callee is not info and self.first_build(callee, depth + 1) is not None:
                found.append((False, call))
        return min(found, key=lambda entry: entry[0])[1] if found else None

    # does a worker run TensorFlow? --------------------------------------------------------------
    def owner_runs_tensorflow(self, owner: "Owner") -> bool:
        """The owner's workers run TensorFlow: their code starts or uses the runtime (in the
        child's execution mode), or they receive TensorFlow state (arguments, `initargs`,
        `partial` arguments, captured values) that they use."""
        method = self.analysis.start_method(owner.value)[0]
        for crossing in owner.crossings:
            if any(_arrives(crossing, value.kind, method) for _, value in self.analysis.sent_state(crossing)):
                return True
        return self.owner_code_runs_tensorflow(owner)

    def owner_code_runs_tensorflow(self, owner: "Owner") -> bool:
        """The owner's workers' own code starts or uses the runtime (a session, an op, a model): what
        TensorFlow state they receive is not counted (a child that only adds graph nodes runs none)."""
        sites = {id(crossing.callable): crossing.site for crossing in owner.crossings}
        return any(self.worker_runs_tensorflow(worker, sites.get(id(worker.node))) for worker in owner.workers)

    def sends_tf1_state_pickled(self) -> bool:
        """The file sends a session or graph object where it is pickled even under fork (a task, a queue):
        that fails (TFP101), and the workers waiting for it never run it."""
        return any(crossing.pickled is not Pickling.UNLESS_FORK and value.kind in TF1_STATE
                   for crossing in self.analysis.crossings for _, value in self.analysis.sent_state(crossing))

    def worker_runs_tensorflow(self, worker: "Worker", site=None) -> bool:
        """`site`: where the worker is handed over (attributes its object set before count)."""
        if worker.kind is WorkerKind.TF_FUNCTION:
            return True
        if worker.kind is WorkerKind.FORK_CHILD:
            return any(self._code_runs(statement, 0) for statement in worker.statements)
        if worker.lambda_node is not None:
            return self._code_runs(worker.lambda_node.body, 0)
        if worker.function is not None:
            if worker.instance_class is not None and self._uses_state_attribute(worker, site):
                return True
            return self.function_runs(worker.function)
        return worker.imported is not None and worker.imported.runs_tf

    def function_runs(self, info: FunctionInfo, depth: int = 0) -> bool:
        cached = self._runs.get(info.node)
        if cached is not None:
            return cached
        self._runs[info.node] = False  # recursion guard
        result = self._code_runs(info.node.body, depth)
        self._runs[info.node] = result
        return result

    def _code_runs(self, body: cst.CSTNode, depth: int) -> bool:
        analysis = self.analysis
        for call in calls_in_evaluation_order(body):
            if self.only_if_unbuilt(call):
                continue
            if self.initialises_runtime(call, graph_building=False) is not None:
                return True
            if self.calls_project_tensorflow(call):
                return True
            if depth >= MAX_WORKER_DEPTH:
                continue
            site = analysis.site(call)
            callee = analysis.callee(call, site) if site is not None else None
            if callee is not None and self.function_runs(callee, depth + 1):
                return True
        return False

    def only_if_unbuilt(self, call: cst.Call) -> bool:
        """`if not model.built: model.build(...)`: the call runs only for a model that has no
        weights yet, which the analysis cannot tell (prefer a miss)."""
        for parent in self.analysis.ancestors(call):
            if isinstance(parent, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                return False
            test = parent.test if isinstance(parent, cst.If) else None
            if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) \
                    and isinstance(test.expression, cst.Attribute) and test.expression.attr.value == "built":
                return True
        return False

    def calls_project_tensorflow(self, call: cst.Call) -> bool:
        """`call` runs a function of another project module that runs TensorFlow."""
        project = self.analysis.project
        site = self.analysis.site(call) if project is not None else None
        if site is None:
            return False
        facts = project_callee(self.analysis, call, site)
        return facts is not None and facts.runs_tf

    def _uses_state_attribute(self, worker: "Worker", site) -> bool:
        """A bound method worker whose object holds TF state that the method reads (its `built`
        flag, or a `build()` under `if not self.model.built:`, do not count: TFP103 agrees)."""
        attributes = self.analysis.state_attributes(worker.instance_class, site, worker.instance_origin)
        held = {name for name, _ in attributes}
        self_name = worker.function.self_name
        if not held or not self_name:
            return False
        return any(isinstance(n, cst.Attribute) and isinstance(n.value, cst.Name) and n.value.value == self_name
                   and n.attr.value in held and not self._only_checks_built(n)
                   for n in iter_tree(worker.function.node.body))

    def _only_checks_built(self, held: cst.Attribute) -> bool:
        ancestors = self.analysis.ancestors(held)
        if ancestors and isinstance(ancestors[0], cst.Attribute) and ancestors[0].attr.value == "built":
            return True
        call = next((node for node in ancestors if isinstance(node, cst.Call)), None)
        return call is not None and self.only_if_unbuilt(call)


def _arrives(crossing, kind: Kind, method: str) -> bool:
    """TF state reaches the worker: inherited through fork, or pickled and unpickled (only Keras
    models survive pickling; the rest fail in the parent, which TFP101/TFP102 report)."""
    inherited = crossing.pickled is Pickling.UNLESS_FORK and method == "fork"
    return inherited or kind is Kind.KERAS_MODEL


def is_eager_op(rest: str) -> bool:
    """`rest` is a name under `tensorflow.` that runs an op when called eagerly."""
    if rest in tensorflow.TOP_LEVEL_OPS:
        return True
    head = rest.split(".")[0]
    return head in tensorflow.EAGER_OP_NAMESPACES and "." in rest and not rest.startswith(tuple(tensorflow.NOT_OPS))


def _short(name: str) -> str:
    return name.replace("tensorflow.", "tf.", 1)
