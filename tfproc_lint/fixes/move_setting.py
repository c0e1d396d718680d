"""TFP402/TFP403 fix: move a setting above the statement where TensorFlow's runtime starts.

    batch = load_batch(1)          ->      configure()
    configure()                            batch = load_batch(1)

The moved unit is the statement that makes the setting (`tf.config...(...)`, `os.environ[...] =`),
or the call of a function of this file that only makes settings (`configure()`, called once). It
moves up within its own block, just above the statement during which the runtime starts, when the
statements in between do not bind what it reads, read the environment or the configuration.
Nothing else changes, so the fix is safe.
"""

from __future__ import annotations

import libcst as cst

from tfproc_lint.analysis.execution import RuntimeStart
from tfproc_lint.analysis.file_analysis import FileAnalysis
from tfproc_lint.analysis.walk import calls_in, iter_tree, read_names
from tfproc_lint.diagnostics import Applicability
from tfproc_lint.fixes.base import FixBuilder, Plan, Refusal
from tfproc_lint.fixes.common import blank_lines_above, bound_names
from tfproc_lint.knowledge import environment, tensorflow

MAX_DEPTH = 4
# Calls a settings-only function may make besides the settings themselves.
_HARMLESS = frozenset({
    "tensorflow.config.list_physical_devices", "tensorflow.config.experimental.list_physical_devices",
    "tensorflow.config.get_visible_devices", "tensorflow.config.experimental.get_visible_devices",
    "tensorflow.config.LogicalDeviceConfiguration", "tensorflow.config.experimental.VirtualDeviceConfiguration",
})
_BUILTINS = frozenset({"len", "str", "int", "range", "list", "dict", "enumerate", "min", "max"})
# Text that shows a statement reads what the unit sets.
_READS_SETTINGS = ("environ", "getenv", "config.", "get_memory_growth", "parallelism_threads")


class MoveBeforeRuntimeStart(FixBuilder):
    applicability = Applicability.SAFE

    def __init__(self, node: cst.CSTNode, started: RuntimeStart) -> None:
        self.node = node  # the setting: a tf.config call, or the Assign / call that sets a variable
        self.started = started
        self.title = "move the setting above the statement that starts TensorFlow's runtime"

    def plan(self, analysis: FileAnalysis) -> Plan | Refusal:
        unit = _statement_of(analysis, self.node)
        for _ in range(MAX_DEPTH):
            if unit is None:
                break
            block, container = _block_of(analysis, unit)
            index = block.index(unit)
            first = _where_it_starts(analysis, block, index)
            if first is not None:
                return self._move(analysis, block, container, first, index)
            unit = self._caller_statement(analysis, unit)
        return self.refuse(f"the runtime starts (line {analysis.line_of(self.started.call)}) outside the block "
                           "that makes this setting: move it before that line by hand")

    def _move(self, analysis, block, container, first: int, index: int) -> Plan | Refusal:
        unit = block[index]
        between = block[first:index]
        reads = {n.value for n in read_names(unit)}
        if reads & bound_names(between):
            return self.refuse("the setting reads a name that the statements above it bind")
        reader = next((s for s in between if _reads_settings(analysis.module.code_for_node(s))), None)
        if reader is not None:
            return self.refuse(f"the statements above it read the environment or the configuration "
                               f"({_settings_read(analysis, reader)})")

        def reorder(updated):
            statements = list(updated.body)
            moved = statements.pop(index)
            anchor = statements[first]
            # The moved statement keeps its comments and takes the blank lines above the anchor.
            own = list(moved.leading_lines)[len(blank_lines_above(moved)):]
            above = blank_lines_above(anchor)
            moved = moved.with_changes(leading_lines=[*above, *own])
            statements[first] = anchor.with_changes(leading_lines=list(anchor.leading_lines)[len(above):])
            statements.insert(first, moved)
            return updated.with_changes(body=statements)

        return {container: reorder}

    def _caller_statement(self, analysis: FileAnalysis, unit) -> cst.CSTNode | None:
        """The statement `configure()` that calls the settings-only function holding `unit`."""
        function = analysis.enclosing_function_node(unit)
        info = analysis.symbols.functions.get(function) if function is not None else None
        if info is None or info.class_info is not None or not _only_settings(analysis, info):
            return None
        callers = [site for site in analysis.symbols.calls if analysis.callee(site.node, site) is info]
        if len(callers) != 1 or any(arg.star for arg in callers[0].node.args):
            return None
        return _statement_of(analysis, callers[0].node)


def _reads_settings(text: str) -> bool:
    return any(marker in text for marker in _READS_SETTINGS)


def _settings_read(analysis: FileAnalysis, statement: cst.CSTNode) -> str:
    """Where `statement` reads the environment or the configuration: "line 6: `os.environ.get("GPU")`",
    the shortest call that shows it (else subscript, else attribute), else the statement's line."""
    shown = [node for node in iter_tree(statement) if isinstance(node, (cst.Call, cst.Subscript, cst.Attribute))
             and _reads_settings(analysis.module.code_for_node(node))]
    group = next((found for kind in (cst.Call, cst.Subscript, cst.Attribute)
                  if (found := [node for node in shown if isinstance(node, kind)])), [])
    chosen = min(group, key=lambda node: len(analysis.module.code_for_node(node)), default=None)
    if chosen is None:
        return f"line {analysis.line_of(statement)}"
    return f"line {analysis.line_of(chosen)}: `{analysis.code(chosen, 40)}`"


def _where_it_starts(analysis: FileAnalysis, block: list, index: int) -> int | None:
    """The statement before `block[index]` during which the runtime starts: the last one that
    begins with nothing started, when every path from it to `block[index]` has started it."""
    for position in range(index - 1, -1, -1):
        known, state = analysis.execution.state_at_start(block[position])
        if known and state is None:
            return position
    return None


def _statement_of(analysis: FileAnalysis, node: cst.CSTNode) -> cst.SimpleStatementLine | None:
    """The one-statement line made of `node` alone (`f(...)` or `x[...] = ...`)."""
    for parent in analysis.ancestors(node):
        if isinstance(parent, cst.SimpleStatementLine):
            if len(parent.body) != 1:
                return None
            small = parent.body[0]
            if small is node or (isinstance(small, cst.Expr) and small.value is node):
                return parent
            return None
        if isinstance(parent, cst.BaseCompoundStatement):
            return None
    return None


def _block_of(analysis: FileAnalysis, statement) -> tuple[list, cst.CSTNode]:
    parent = analysis.ancestors(statement)[0]
    return list(parent.body), parent


def _only_settings(analysis: FileAnalysis, info) -> bool:
    """The function only configures TensorFlow or sets environment variables."""
    for call in calls_in(info.node.body):
        site = analysis.site(call)
        name = analysis.name_of(call.func)
        if name in tensorflow.RUNTIME_CONFIGURATION or name in _HARMLESS or name == environment.PUTENV:
            continue
        if isinstance(call.func, cst.Name) and call.func.value in _BUILTINS and name is None:
            continue
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in environment.ENVIRON_SETTERS and site is not None \
                and analysis.classifier.qualified_name(func.value, site.scope, site.order) == environment.ENVIRON:
            continue
        return False
    return not any(isinstance(node, (cst.Return, cst.Yield, cst.Global, cst.Nonlocal))
                   for node in iter_tree(info.node.body, enter_scopes=False))
