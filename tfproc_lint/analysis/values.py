"""What the analysis says an expression evaluates to (`Value`, found by classifier.py), and how a
call's arguments are read.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from tfproc_lint.analysis.kinds import STATE, Kind
from tfproc_lint.analysis.symbols import FunctionInfo, Scope

# How many steps names, values and classes are followed.
MAX_DEPTH = 6


@dataclass(frozen=True, eq=False)
class Value:
    kind: Kind
    origin: cst.CSTNode | None = None  # the call (or def/class) that made it
    method: str | None = None  # start method named where the context/pool was made
    detail: str = ""  # canonical name of the constructor, for messages
    info: object = None  # FunctionInfo / ClassInfo / (binding) for FUNCTION, CLASS, INSTANCE
    extra: dict = field(default_factory=dict)

    @property
    def is_state(self) -> bool:
        return self.kind in STATE


UNKNOWN = Value(Kind.UNKNOWN)
NONE = Value(Kind.NONE)
DATA = Value(Kind.DATA)


def merge(values) -> Value:
    """Several bindings may reach a use: agree on one kind, ignoring `None` placeholders."""
    result: Value | None = None
    saw_none = False
    for value in values:
        if value.kind is Kind.NONE:
            saw_none = True
            continue
        if result is None:
            result = value
        elif result.kind is not value.kind:
            return UNKNOWN
    if result is None:
        return NONE if saw_none else UNKNOWN
    return result


def enclosing_function(scope: Scope | None) -> FunctionInfo | None:
    while scope is not None:
        if scope.kind == "function":
            return scope.function
        scope = scope.parent
    return None


def keyword(call: cst.Call, name: str) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    return None


def positional(call: cst.Call, index: int) -> cst.BaseExpression | None:
    plain = [arg for arg in call.args if arg.keyword is None and not arg.star]
    if index < len(plain) and all(not arg.star for arg in call.args[: call.args.index(plain[index])]):
        return plain[index].value
    return None


def argument(call: cst.Call, index: int, name: str) -> cst.BaseExpression | None:
    return keyword(call, name) or positional(call, index)


def literal_start_method(call: cst.Call) -> str | None:
    """`get_context("spawn")` -> "spawn"; `get_context()` -> "default"; non-literal -> "unknown"."""
    method = argument(call, 0, "method")
    if method is None or (isinstance(method, cst.Name) and method.value == "None"):
        return "default"
    if isinstance(method, cst.SimpleString):
        return method.evaluated_value if isinstance(method.evaluated_value, str) else "unknown"
    return "unknown"
