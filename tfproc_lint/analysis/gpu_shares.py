"""Shares of one GPU that an engine asks for (TFP401): Ray's `num_gpus` below 1, written as a
literal or as a module constant (of this module, or of another module of the project), and Spark's
`spark.task.resource.gpu.amount` below 1, set on a `SparkSession.builder` or a `SparkConf`. A value
that does not resolve statically (a config attribute, a parameter, a name bound twice) is no share:
prefer a miss."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from tfproc_lint.analysis import api
from tfproc_lint.analysis.symbols import Scope
from tfproc_lint.analysis.values import argument


def number(analysis, node: cst.BaseExpression | None, scope: Scope | None) -> float | None:
    """The value of a literal number (`0.25`, `1 / 4`, `"0.25"`) or of a module constant bound
    once to one; None for anything else."""
    if isinstance(node, cst.Name) and scope is not None:
        owner = analysis.symbols.resolving_scope(node.value, scope)
        if owner is None or owner.kind != "module":
            return None
        bindings = owner.bindings.get(node.value, [])
        if len(bindings) == 1 and bindings[0].kind == "import" and analysis.project is not None:
            return analysis.project.constant(bindings[0].qualified)  # `from config import GPU_SHARE`
        if len(bindings) != 1 or bindings[0].kind != "assign":
            return None
        return number(analysis, bindings[0].value, None)
    if isinstance(node, cst.Attribute) and scope is not None and analysis.project is not None:
        order = analysis.symbols.end_of_file
        return analysis.project.constant(analysis.classifier.qualified_name(node, scope, order))  # `config.SHARE`
    if isinstance(node, (cst.Float, cst.Integer)):
        return float(node.evaluated_value)
    if isinstance(node, cst.SimpleString) and isinstance(node.evaluated_value, str):
        try:
            return float(node.evaluated_value)
        except ValueError:
            return None
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Divide) \
            and isinstance(node.left, cst.Integer) and isinstance(node.right, cst.Integer) \
            and node.right.evaluated_value:
        return node.left.evaluated_value / node.right.evaluated_value
    return None


def share(analysis, node: cst.BaseExpression | None, scope: Scope | None) -> float | None:
    """The value when it is a share of one GPU (between 0 and 1), else None."""
    value = number(analysis, node, scope)
    return value if value is not None and 0 < value < 1 else None


@dataclass(frozen=True)
class SparkSetting:
    call: cst.Call  # `.config(key, value)` or `.set(key, value)`
    key: str
    value: cst.BaseExpression
    scope: Scope


def spark_settings(analysis) -> list[SparkSetting]:
    """Literal-keyed settings on a SparkSession builder or a SparkConf."""
    routes = analysis.engine_routes
    if not routes.active:
        return []
    found = []
    for site in analysis.symbols.calls:
        func = site.node.func
        if not isinstance(func, cst.Attribute):
            continue
        kind = routes.object_type(func.value, site.scope, site.order)
        if (kind, func.attr.value) not in api.SPARK_CONFIG_SETTERS:
            continue
        key, value = argument(site.node, 0, "key"), argument(site.node, 1, "value")
        if isinstance(key, cst.SimpleString) and isinstance(key.evaluated_value, str) and value is not None:
            found.append(SparkSetting(site.node, key.evaluated_value, value, site.scope))
    return found


def spark_task_gpu_share(analysis) -> tuple[SparkSetting, float] | None:
    """The first `spark.task.resource.gpu.amount` below 1, with its value."""
    for setting in spark_settings(analysis):
        if setting.key == api.SPARK_TASK_GPU_AMOUNT:
            value = share(analysis, setting.value, setting.scope)
            if value is not None:
                return setting, value
    return None


def spark_executor_memory_limit(analysis) -> bool:
    """`spark.executorEnv.TF_FORCE_GPU_ALLOW_GROWTH` (or another GPU memory variable) is set."""
    prefix = api.SPARK_EXECUTOR_ENVIRONMENT
    return any(s.key.startswith(prefix) and s.key[len(prefix):] in api.GPU_MEMORY_ENVIRONMENT
               for s in spark_settings(analysis))
