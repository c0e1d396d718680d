"""Everything the rules need to know about one module, computed once and shared."""

from __future__ import annotations

import ast
from functools import cached_property

import libcst as cst

from tfproc_lint.analysis.callers import caller_entries
from tfproc_lint.analysis.execution import ExecutionWalk
from tfproc_lint.analysis.module_facts import ModuleFacts
from tfproc_lint.analysis.start_methods import fixes_default_context
from tfproc_lint.analysis.project_names import ProjectNames
from tfproc_lint.analysis.tf_usage import TensorFlowUsage
from tfproc_lint.config import Config


class FileAnalysis(ModuleFacts):
    """Everything the rules need to know about one module, computed once (most facts on first use).

    The module: `module` (LibCST), `syntax_tree` (CPython's, or None), `path`, `config`, `notebook`.
    Names and values: `symbols` (scopes, bindings, call sites), `classifier` (`classify(node, scope,
        order)`, `qualified_name(...)`); `kind_of(node)` and `name_of(node)` answer for a node where
        it is evaluated, `site(call)` / `site_around(node)` give that call site (scope, order);
        `calls` the call sites by the canonical name they call (`calls.named(names)`, `resolved()`).
    Questions of other modules asked of the file, `f(analysis)`, marked `@per_file` (answers.py) are
        answered once and kept in `answers`.
    The tree: `ancestors(node)`, `loops_around(node)` (loops and comprehensions that contain it),
        `enclosing_function_node(node)`, `module_statement_of(node)`, `function_of(scope)`.
    Process boundaries: `crossings` (each with a `Route`, what is sent and the worker callable),
        `crossing_of(call)`, `sent_state(crossing)`, `engine_routes` (Ray, Dask, Spark).
    Pools, executors and processes: `owners` (with their `Worker`s and fork calls),
        `initialized_tasks()`, `start_method(value)`, `file_start_method`,
        `workers_defined_in_notebook(owner)`.
    Code of this file: `worker(node, scope, order)`, `callee(call, site)`, `find_method(klass, name)`,
        `state_attributes(klass, ...)`.
    TensorFlow: `tf` (execution mode, what starts the runtime, which workers run TensorFlow),
        `execution` (where the runtime may have started), `graph_walk` (where a TF1 graph may have been
        built), `context_walk` (where the default start method may have been fixed).
    Positions and text: `position(node)`, `line_of(node)`, `code(node)`.
    """

    def __init__(self, module: cst.Module, path: str, config: Config, notebook: bool = False,
                 syntax_tree: ast.Module | None = None, project: ProjectNames | None = None) -> None:
        super().__init__(module, path, config, notebook, syntax_tree, project)
        self.classifier.graph_mode = lambda: self.tf.mode.graph

    @cached_property
    def tf(self) -> TensorFlowUsage:
        return TensorFlowUsage(self)

    @cached_property
    def execution(self) -> ExecutionWalk:
        """Where TensorFlow's runtime may have started."""
        return ExecutionWalk(self, self.tf)

    @cached_property
    def caller_walk(self) -> ExecutionWalk | None:
        """`execution` with the functions that other project modules call after their runtime may
        have started walked again from that start (TFP201: a fork there); None when none is."""
        entries = caller_entries(self)
        return ExecutionWalk(self, self.tf, entries=entries) if entries else None

    @cached_property
    def graph_walk(self) -> ExecutionWalk:
        """Where the parent may have built a TF1 graph (TFP201: a fork after it can hang, rarely)."""
        return ExecutionWalk(self, self.tf, detect=self.tf.builds_graph)

    @cached_property
    def context_walk(self) -> ExecutionWalk:
        """Where the default start method may have been set or fixed (TFP203)."""
        return ExecutionWalk(self, self.tf, detect=lambda call, graph: fixes_default_context(self, call),
                             detect_import=lambda statement: self.tf.import_effect(statement, "fixes_context"))
