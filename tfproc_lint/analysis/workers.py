"""What runs in another process: the pools, executors and processes a module makes (owners) and
the code each of their workers runs."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import libcst as cst

from tfproc_lint.analysis.kinds import Kind
from tfproc_lint.analysis.routes import Crossing
from tfproc_lint.analysis.symbols import CallSite, ClassInfo, FunctionInfo, Scope
from tfproc_lint.analysis.values import Value


class WorkerKind(enum.Enum):
    """What a worker is; the value is the word messages use."""

    FUNCTION = "function"  # a function (or a staticmethod) of this file
    METHOD = "method"  # a bound method: its object travels with it
    CLOSURE = "closure"  # a function nested in a function
    LAMBDA = "lambda"
    TF_FUNCTION = "tf_function"
    FORK_CHILD = "fork_child"  # the code a child runs after `os.fork()`
    UNKNOWN = "unknown"


# Workers that run the code of a function of this file (`Worker.function`).
RUNS_A_FUNCTION = (WorkerKind.FUNCTION, WorkerKind.METHOD, WorkerKind.CLOSURE)


@dataclass(eq=False)
class Worker:
    """What a worker process runs: a function, a bound method, a closure, a lambda, the code a
    forked child runs after `os.fork()`, ..."""

    kind: WorkerKind
    node: cst.BaseExpression
    scope: Scope
    function: FunctionInfo | None = None
    lambda_node: cst.Lambda | None = None
    instance_class: ClassInfo | None = None
    instance_origin: cst.Call | None = None  # `Explainer(model)` when the worker is its bound method
    statements: tuple = ()  # fork_child: the statements the child runs
    imported: object = None  # a function of another project module: its summaries.FunctionFacts
    # A bound method of an object of another project module's class: the constructor's facts
    # (`holds`: the state its object carries) and the class's qualified name.
    imported_constructor: object = None


@dataclass(eq=False)
class Owner:
    """A pool, executor or process made in this file (or an `os.fork()`, a joblib `Parallel`, a
    Keras call with multiprocessing data workers), with what its workers run and receive."""

    value: Value
    construction: cst.Call
    site: CallSite
    workers: list[Worker] = field(default_factory=list)
    fork_calls: list[cst.Call] = field(default_factory=list)  # where processes start
    crossings: list[Crossing] = field(default_factory=list)

    @property
    def noun(self) -> str:
        return _OWNER_NOUNS.get(self.value.detail) or _OWNER_NOUNS[self.value.kind]


_OWNER_NOUNS = {Kind.POOL: "pool", Kind.EXECUTOR: "executor", Kind.PROCESS: "process",
                Kind.PARALLEL: "joblib Parallel", "os.fork": "os.fork() child",
                "keras workers": "Keras data workers"}
