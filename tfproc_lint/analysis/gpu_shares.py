"""Shares of one GPU that an engine asks for (TFP401): Ray's `num_gpus` below 1, written as a
literal, a module constant (of this module, or of another module of the project), a local variable
or a config class's attribute, and Spark's `spark.task.resource.gpu.amount` below 1, set on a
`SparkSession.builder` or a `SparkConf`. A value that does not resolve statically (a parameter, a
command-line option, a name bound twice, an attribute also set at run time) is no share: prefer a
miss. Spark's settings are read in engines/spark.py."""

from __future__ import annotations

import libcst as cst

from tfproc_lint.analysis.kinds import Kind
from tfproc_lint.analysis.symbols import ClassInfo, Scope
from tfproc_lint.analysis.walk import iter_tree


def number(analysis, node: cst.BaseExpression | None, scope: Scope | None) -> float | None:
    """The value of a literal number (`0.25`, `1 / 4`, `"0.25"`), of a module constant or a local
    variable bound once to one, or of a config class's attribute (`Config.gpus`, `cfg.gpus` with
    `cfg = Config()`) bound once to one in the class body and assigned nowhere else; None for
    anything else (a parameter, a command-line option)."""
    if isinstance(node, cst.Name) and scope is not None:
        owner = analysis.symbols.resolving_scope(node.value, scope)
        if owner is None or owner.kind not in ("module", "function"):
            return None
        bindings = owner.bindings.get(node.value, [])
        if len(bindings) == 1 and bindings[0].kind == "import" and analysis.project is not None:
            return analysis.project.constant(bindings[0].qualified)  # `from config import GPU_SHARE`
        if len(bindings) != 1 or bindings[0].kind != "assign":
            return None
        return number(analysis, bindings[0].value, None)
    if isinstance(node, cst.Attribute) and scope is not None:
        value = _config_attribute(analysis, node, scope)
        if value is None and analysis.project is not None:
            order = analysis.symbols.end_of_file
            value = analysis.project.constant(analysis.classifier.qualified_name(node, scope, order))  # `config.SHARE`
        return value
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


def _config_attribute(analysis, node: cst.Attribute, scope: Scope) -> float | None:
    """`Config.gpus` or `config.gpus` (an instance of a class of this module): the number the class
    body binds `gpus` to, when nothing else in the module assigns an attribute of that name."""
    order = analysis.symbols.end_of_file
    value = analysis.classifier.classify(node.value, scope, order)
    klass = value.info if value.kind is Kind.CLASS and isinstance(value.info, ClassInfo) \
        else analysis.classifier.instance_class(node.value, scope, order)
    if klass is None:
        return None
    name = node.attr.value
    bindings = klass.scope.bindings.get(name, [])
    if len(bindings) != 1 or bindings[0].kind != "assign" or klass.attributes.get(name):
        return None
    if any(isinstance(n, (cst.Assign, cst.AugAssign, cst.AnnAssign)) and _sets_attribute(n, name)
           for n in iter_tree(analysis.module)):
        return None  # `config.gpus = args.gpus`: set at run time
    return number(analysis, bindings[0].value, None)


def _sets_attribute(statement, name: str) -> bool:
    targets = [t.target for t in statement.targets] if isinstance(statement, cst.Assign) else [statement.target]
    return any(isinstance(t, cst.Attribute) and t.attr.value == name for t in targets)


def share(analysis, node: cst.BaseExpression | None, scope: Scope | None) -> float | None:
    """The value when it is a share of one GPU (between 0 and 1), else None."""
    value = number(analysis, node, scope)
    return value if value is not None and 0 < value < 1 else None
