"""What the analysis says an expression evaluates to (`Value`, found by classifier.py), the typed
facts a value carries (its pickler, where it came from, the engine task it sends to), and how a
call's arguments are read.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import libcst as cst

from tfproc_lint.analysis.kinds import STATE, Kind
from tfproc_lint.analysis.symbols import FunctionInfo, Scope
from tfproc_lint.knowledge.engines import TaskGrain
from tfproc_lint.records import record

# How many steps names, values and classes are followed.
MAX_DEPTH = 6


class Pickler(Enum):
    """How an owner serialises what it sends (None on a Value: the standard pickle, not named)."""
    PICKLE = "pickle"
    DILL = "dill"  # multiprocess, pathos
    CLOUDPICKLE = "cloudpickle"  # joblib's loky, every engine

    @property
    def by_value(self) -> bool:
        """Lambdas and closures travel, with what they capture (pickle stores a function by name)."""
        return self is not Pickler.PICKLE


@dataclass(frozen=True)
class Provenance:
    """Where a value came from, where that changes what sending it does."""
    in_child: bool = False  # given to a child process (`Process(args=...)`): a send from it fails there
    proxy: bool = False  # a Manager proxy or queue: what it is given goes to the manager's process
    manager: cst.CSTNode | None = None  # the `Manager()` call that started that process
    place: object = None  # state made in another module of the project (a project.Place)


NO_PROVENANCE = Provenance()


class TaskCall(Enum):
    """What an engine call does with its callable or value."""
    TASK = "task"  # a Ray task's `.remote()`
    ACTOR = "actor"  # a Ray actor's constructor `.remote()`
    ACTOR_METHOD = "actor method"  # an actor method's `.remote()` (or a remote received as a parameter)
    PUT = "put"  # ray.put
    DELAYED = "delayed"  # dask.delayed
    UDF = "udf"  # a Spark udf, pandas_udf or predict_batch_udf
    OBJECT_METHOD = "object method"  # a method of an engine object (client.submit, rdd.map): EngineTask.method


@record
class EngineTask:
    """What an engine crossing's owner (a Value of kind ENGINE) knows of the work it sends."""
    engine: str  # "ray", "dask", "spark" (knowledge.engines.ENGINE_FACTS)
    grain: TaskGrain  # how many times the callable runs
    call: TaskCall
    method: str | None = None  # the engine object's method, for TaskCall.OBJECT_METHOD ("submit", "scatter")
    receiver: cst.BaseExpression | None = None  # that object, and its type ("dask.client")
    receiver_type: str | None = None
    function: object = None  # the FunctionInfo / ClassInfo of a same-file task, actor or UDF
    imported: object = None  # an imported Ray task's facts (project layer)
    num_gpus: cst.BaseExpression | None = None  # a Ray task's or actor's `num_gpus=` (TFP401)


@dataclass(frozen=True, eq=False)
class Value:
    kind: Kind
    origin: cst.CSTNode | None = None  # the call (or def/class) that made it
    method: str | None = None  # start method named where the context/pool was made
    detail: str = ""  # canonical name of the constructor, for messages
    info: object = None  # FunctionInfo / ClassInfo / (binding) for FUNCTION, CLASS, INSTANCE
    pickler: Pickler | None = None  # an owner's, where not the standard pickle
    provenance: Provenance = NO_PROVENANCE
    task: EngineTask | None = None  # an engine crossing's owner (Kind.ENGINE)

    @property
    def is_state(self) -> bool:
        return self.kind in STATE

    @property
    def pickles_by_value(self) -> bool:
        """An owner whose pickler sends lambdas and closures (dill, cloudpickle)."""
        return self.pickler is not None and self.pickler.by_value


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
