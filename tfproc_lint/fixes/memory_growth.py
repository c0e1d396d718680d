"""TFP401 fix: turn on GPU memory growth first thing in every worker.

    def setup(barrier):                        def setup(barrier):
        ...                          ->            for gpu in tf.config.list_physical_devices("GPU"):
                                                       tf.config.experimental.set_memory_growth(gpu, True)
                                                   ...

The lines go at the top of the pool's (or executor's) `initializer`, or of a `Process` target; a
pool without an initializer gets a new one (`_init_gpu_memory`).
"""

from __future__ import annotations

import libcst as cst

from tfproc_lint.analysis.file_analysis import FileAnalysis
from tfproc_lint.analysis.kinds import Kind
from tfproc_lint.analysis.settings import forked_after_start
from tfproc_lint.analysis.symbols import FunctionInfo
from tfproc_lint.analysis.values import argument
from tfproc_lint.analysis.walk import read_names
from tfproc_lint.analysis.workers import Owner, WorkerKind
from tfproc_lint.diagnostics import Applicability
from tfproc_lint.fixes.base import FixBuilder, Plan, Refusal
from tfproc_lint.fixes.common import (
    add_keyword, blank_lines_above, module_import_name, split_docstring, unique_name,
)


class TurnOnMemoryGrowth(FixBuilder):
    title = "turn on GPU memory growth first thing in every worker"
    applicability = Applicability.UNSAFE

    def __init__(self, owners: list[Owner]) -> None:
        self.owners = owners

    def plan(self, analysis: FileAnalysis) -> Plan | Refusal:
        if analysis.tf.mode.graph:
            return self.refuse("TF1 sessions take their GPU options from a ConfigProto: set "
                               "gpu_options.allow_growth = True in the session config of each worker")
        forked = {id(owner) for owner, _ in forked_after_start(analysis)}
        if any(id(owner) in forked for owner in self.owners):
            return self.refuse("the workers are forked after the parent started TensorFlow: memory growth set "
                               "there raises (TFP402); start them from a spawn context first (TFP201)")
        mapping: dict = {}
        tf = module_import_name(analysis, "tensorflow")
        if tf is None:
            return self.refuse("the module does not import tensorflow itself (Keras may run on another backend)")
        for owner in self.owners:
            kind = owner.value.kind
            if kind not in (Kind.POOL, Kind.EXECUTOR, Kind.PROCESS) or owner.value.detail in ("os.fork",
                                                                                              "keras workers"):
                return self.refuse("these workers have no initializer to put it in")
            if owner.value.info is not None:
                return self.refuse("a subclass decides what its workers run")
            call = owner.construction
            index = {Kind.POOL: 1, Kind.EXECUTOR: 2, Kind.PROCESS: 1}[kind]
            hook = argument(call, index, "target" if kind is Kind.PROCESS else "initializer")
            if hook is None and kind is not Kind.PROCESS:
                self._new_initializer(analysis, owner, tf, mapping)
                continue
            function = self._module_function(analysis, hook, owner)
            if function is None or not isinstance(function.node.body, cst.IndentedBlock):
                return self.refuse("the worker's initializer or target is not a function of this module")
            if function.node not in mapping:
                mapping[function.node] = lambda updated, info=function: _prepend(updated, _growth(tf, _loop_name(info)))
        return mapping

    def _module_function(self, analysis: FileAnalysis, node, owner: Owner) -> FunctionInfo | None:
        if node is None:
            return None
        worker = analysis.worker(node, owner.site.scope, owner.site.order)
        info = worker.function
        if worker.kind is not WorkerKind.FUNCTION or info is None \
                or info.scope.parent is not analysis.symbols.module_scope:
            return None
        return info

    def _new_initializer(self, analysis: FileAnalysis, owner: Owner, tf: str, mapping: dict) -> None:
        name = unique_name(analysis, "_init_gpu_memory")
        definition = cst.parse_statement(
            f"def {name}():\n"
            f"    for gpu in {tf}.config.list_physical_devices(\"GPU\"):\n"
            f"        {tf}.config.experimental.set_memory_growth(gpu, True)\n"
        )
        anchor = analysis.module_statement_of(owner.construction)
        previous = mapping.get(anchor)

        def insert(updated, previous=previous):
            if previous is not None:
                updated = previous(updated) if callable(previous) else previous
            nodes = list(updated.nodes) if isinstance(updated, cst.FlattenSentinel) else [updated]
            head = nodes[0]
            blank = blank_lines_above(head)
            comments = list(head.leading_lines)[len(blank):]
            two = [cst.EmptyLine(), cst.EmptyLine()]
            nodes[0] = head.with_changes(leading_lines=two + comments)
            return cst.FlattenSentinel([definition.with_changes(leading_lines=blank or two), *nodes])

        mapping[anchor] = insert
        mapping[owner.construction] = lambda updated: add_keyword(updated, "initializer", cst.Name(name))


def _loop_name(info: FunctionInfo) -> str:
    taken = set(info.scope.bindings) | {n.value for n in read_names(info.node.body)}
    return "gpu" if "gpu" not in taken else "_gpu"


def _growth(tf: str, name: str) -> cst.BaseStatement:
    return cst.parse_statement(
        f"for {name} in {tf}.config.list_physical_devices(\"GPU\"):\n"
        f"    {tf}.config.experimental.set_memory_growth({name}, True)\n"
    )


def _prepend(function: cst.FunctionDef, statement: cst.BaseStatement) -> cst.FunctionDef:
    """Insert `statement` after the docstring and the `global` declarations."""
    head, rest = split_docstring(function.body)
    while rest and isinstance(rest[0], cst.SimpleStatementLine) and all(
            isinstance(small, (cst.Global, cst.Nonlocal)) for small in rest[0].body):
        head.append(rest.pop(0))
    return function.with_changes(body=function.body.with_changes(body=[*head, statement, *rest]))
