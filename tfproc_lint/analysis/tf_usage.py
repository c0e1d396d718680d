"""Which calls start TensorFlow's runtime, build per-task state, and which code uses TensorFlow.

Importing TensorFlow, building a `tf.Graph` or configuring (`tf.config.*`) does not start the
runtime's thread pools; creating a session, running an eager op, building or calling a Keras model,
calling a `tf.function` or loading a SavedModel does (see runtime_probe's TFP201 scenarios).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from tfproc_lint.analysis.names import is_tensorflow
from tfproc_lint.analysis.symbols import FunctionInfo, Scope
from tfproc_lint.analysis.values import STATE, Kind, Value
from tfproc_lint.analysis.walk import calls_in, read_names

if TYPE_CHECKING:
    from tfproc_lint.analysis.file_analysis import FileAnalysis, Worker

# tf.<namespace>.* functions that execute ops eagerly.
_OP_NAMESPACES = frozenset(
    "math linalg nn random image signal strings sparse raw_ops bitwise ragged audio".split()
)
_NOT_OPS = frozenset({"random.set_seed", "random.get_global_generator", "random.experimental"})
# Top-level tf.* functions that execute ops eagerly.
_TOP_LEVEL_OPS = frozenset(
    """constant Variable convert_to_tensor matmul add subtract multiply divide add_n zeros ones
    fill range reshape cast concat stack unstack split tile pad gather gather_nd scatter_nd where
    reduce_sum reduce_mean reduce_max reduce_min reduce_prod reduce_any reduce_all einsum tensordot
    transpose square sqrt exp abs norm one_hot argmax argmin eye zeros_like ones_like expand_dims
    squeeze identity sort argsort maximum minimum clip_by_value clip_by_norm boolean_mask cumsum
    sigmoid tanh print random_normal random_uniform truncated_normal linspace meshgrid""".split()
)
_MODEL_RUNS = frozenset(
    "predict fit evaluate predict_on_batch train_on_batch test_on_batch build predict_step "
    "fit_generator predict_generator evaluate_generator".split()
)
# Keras constructors that create weights at once (load, clone, applications, functional).
_KERAS_BUILDS_AT_ONCE = ("keras.models.load_model", "keras.saving.load_model", "keras.models.clone_model",
                         "keras.models.model_from_json", "keras.models.model_from_config",
                         "keras.Model", "keras.models.Model")
_GRAPH_MODE_SWITCHES = frozenset({"tensorflow.disable_eager_execution", "tensorflow.disable_v2_behavior"})
# Per-task builders for TFP301: the expensive state a worker should build once.
_BUILDER_KINDS = frozenset({Kind.SESSION, Kind.KERAS_MODEL, Kind.SAVED_MODEL})
_GRAPH_BUILDERS = frozenset({"tensorflow.Graph", "tensorflow.train.import_meta_graph"})


class TensorFlowUsage:
    def __init__(self, analysis: "FileAnalysis") -> None:
        self.analysis = analysis
        self.classifier = analysis.classifier
        self._uses: dict[cst.CSTNode, bool] = {}

    # runtime initialisation -------------------------------------------------------------------
    def graph_mode(self) -> bool:
        """`tf.compat.v1.disable_eager_execution()` anywhere: ops only build graphs."""
        analysis = self.analysis
        for site in analysis.symbols.calls:
            if analysis.classifier.qualified_name(site.node.func, site.scope, site.order) in _GRAPH_MODE_SWITCHES:
                return True
        return False

    def initialises_runtime(self, call: cst.Call, graph_building: bool, graph_mode: bool) -> str | None:
        """Why this call starts TensorFlow's runtime in the calling process, or None."""
        site = self.analysis.site(call)
        if site is None:
            return None
        classifier = self.classifier
        value = classifier.classify(call, site.scope, site.order)
        if value.origin is call:
            if value.kind is Kind.SESSION:
                return "creates a session"
            if value.kind is Kind.SAVED_MODEL:
                return "loads a SavedModel"
            if value.kind is Kind.KERAS_MODEL and self._builds_weights(value, call):
                return "loads a Keras model" if "load" in value.detail else "builds a Keras model"
        func = call.func
        if isinstance(func, cst.Attribute):
            receiver = classifier.classify(func.value, site.scope, site.order)
            if receiver.kind is Kind.SESSION and func.attr.value == "run":
                return "runs a session"
            if receiver.kind is Kind.KERAS_MODEL and func.attr.value in _MODEL_RUNS:
                return f"calls model.{func.attr.value}()"
            if receiver.kind is Kind.SAVED_MODEL:
                return "calls a loaded SavedModel"
        callee = classifier.classify(func, site.scope, site.order)
        if callee.kind is Kind.KERAS_MODEL:
            return "calls a Keras model"
        if callee.kind is Kind.TF_FUNCTION and callee.origin is not call:
            return "calls a tf.function"
        if not (graph_building or graph_mode):
            name = classifier.qualified_name(func, site.scope, site.order)
            if name and name.startswith("tensorflow.") and self._is_eager_op(name[len("tensorflow."):]):
                return f"runs an eager op ({name.replace('tensorflow.', 'tf.', 1)})"
        return None

    @staticmethod
    def _is_eager_op(rest: str) -> bool:
        if rest in _TOP_LEVEL_OPS:
            return True
        head = rest.split(".")[0]
        return head in _OP_NAMESPACES and "." in rest and not rest.startswith(tuple(_NOT_OPS))

    def _builds_weights(self, value: Value, call: cst.Call) -> bool:
        if value.detail.startswith("keras.applications.") or value.detail in _KERAS_BUILDS_AT_ONCE:
            return bool(call.args) or value.detail.startswith("keras.applications.")
        if value.detail in ("keras.Sequential", "keras.models.Sequential"):
            text = self.analysis.module.code_for_node(call)
            return "Input" in text or "input_shape" in text
        return False

    def is_graph_context(self, item: cst.BaseExpression, scope: Scope, order: int) -> bool:
        """`with graph.as_default():` builds graph nodes instead of running ops."""
        if isinstance(item, cst.Call) and isinstance(item.func, cst.Attribute) and item.func.attr.value == "as_default":
            return self.classifier.classify(item.func.value, scope, order).kind is Kind.GRAPH
        return False

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

    # does the worker use TensorFlow? ------------------------------------------------------------
    def worker_uses_tensorflow(self, worker: "Worker") -> bool:
        if worker.kind == "tf_function":
            return True
        if worker.lambda_node is not None:
            return self._code_uses(worker.lambda_node.body, worker.scope, None, 0)
        if worker.function is not None:
            return self.function_uses(worker.function)
        return False

    def function_uses(self, info: FunctionInfo, depth: int = 0) -> bool:
        cached = self._uses.get(info.node)
        if cached is not None:
            return cached
        self._uses[info.node] = False  # recursion guard
        result = self._code_uses(info.node.body, info.scope, info, depth)
        self._uses[info.node] = result
        return result

    def _code_uses(self, body: cst.CSTNode, scope: Scope, info: FunctionInfo | None, depth: int) -> bool:
        symbols = self.analysis.symbols
        for name in {node.value for node in read_names(body)}:
            for binding in symbols.bindings_at(name, scope, 10**9):
                if binding.kind == "import" and is_tensorflow(binding.qualified):
                    return True
                if binding.kind in ("assign", "with") and binding.scope.kind == "module":
                    if self.classifier.classify_binding(binding).kind in STATE:
                        return True
        if info is not None and info.class_info is not None and info.self_name:
            if self.analysis.state_attributes(info.class_info):
                return True
        if depth < 3:
            for call in calls_in(body):
                site = self.analysis.site(call)
                if site is None:
                    continue
                callee = self.analysis.worker(call.func, site.scope, site.order)
                if callee.function is not None and callee.function is not info:
                    if self.function_uses(callee.function, depth + 1):
                        return True
        return False

