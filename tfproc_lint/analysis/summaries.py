"""What one module of a project offers the others (its summary), read off its own analysis.

For each top-level function, class constructor and method: whether calling it starts TensorFlow's
runtime (and why, where), what kind of TensorFlow state it returns, whether it runs TensorFlow
(a worker that uses TF) and what it builds on every call that one build per worker could serve,
each worked out when an importing module first asks; the module-level names that hold TensorFlow
state; what importing the module does (starts the runtime, sets or fixes the start method); and
the names it re-exports. Only what importing the module runs is walked up front.
"""

from __future__ import annotations

from collections.abc import Mapping

import libcst as cst

from tfproc_lint.analysis.execution import ExecutionWalk
from tfproc_lint.analysis.kinds import STATE
from tfproc_lint.analysis.per_task import movable_builders
from tfproc_lint.analysis.project_names import Effect, FunctionFacts, ModuleSummary, Place
from tfproc_lint.analysis.start_methods import fixes_default_context
from tfproc_lint.analysis.values import literal_start_method


class _LazyFunctions(Mapping):
    """A summary's functions, each worked out when first asked for: an importing module asks for
    a few names of a module that may define hundreds."""

    def __init__(self, infos: dict, compute) -> None:
        self._infos = infos
        self._compute = compute
        self.done: dict[str, FunctionFacts] = {}

    def __getitem__(self, name: str) -> FunctionFacts:
        if name not in self.done:
            self.done[name] = self._compute(name, self._infos[name])
        return self.done[name]

    def __iter__(self):
        return iter(self._infos)

    def __len__(self) -> int:
        return len(self._infos)


def summarize(analysis, module: str, display: str) -> ModuleSummary:
    """The summary of `analysis`'s module, named `module`, reported as `display`. Only what
    importing it runs is walked now; each function when an importing module asks for it."""
    tf = analysis.tf
    walk = ExecutionWalk(analysis, tf, imports_only=True)

    def place(node: cst.CSTNode) -> Place:
        span = analysis.position(node)
        return Place(display, span.start.line, span.start.column, span.end.line, span.end.column)

    def facts(name: str, info) -> FunctionFacts:
        after = walk.function(info, None, False, depth=1)
        starts = None
        if after is not None and hasattr(after, "reason"):
            starts = tf.external_starts.get(after.call) or Effect(after.reason, place(after.call))
        returned = analysis.classifier.returned_value(info, 0)
        returns = returned.kind.value if returned.kind in STATE else None
        builders = movable_builders(analysis, info)
        builds = Effect(f"`{analysis.code(builders[0], 40)}`", place(builders[0])) if builders else None
        ray_task = "." not in name and analysis.engine_routes.ray_remote_options(info) is not False
        holds = ()
        if info.class_info is not None and info.node.name.value == "__init__":
            holds = tuple((attribute, value.kind.value, analysis.line_of(value.origin))
                          for attribute, value in analysis.state_attributes(info.class_info)
                          if isinstance(value.origin, cst.CSTNode))
        return FunctionFacts(name, place(info.node.name), starts, returns, tf.function_runs(info), builds, ray_task,
                             holds)

    infos = {}
    module_scope = analysis.symbols.module_scope
    for info in analysis.symbols.functions.values():
        if info.scope.parent is module_scope:
            infos[info.node.name.value] = info
    for klass in analysis.symbols.classes.values():
        if klass.scope.parent is not module_scope:
            continue
        class_name = klass.node.name.value
        for info in analysis.symbols.functions.values():
            if info.class_info is klass:
                infos[f"{class_name}.{info.node.name.value}"] = info
    functions = _LazyFunctions(infos, facts)

    state: dict[str, tuple[str, int]] = {}
    exports: dict[str, str] = {}
    for name, bindings in module_scope.bindings.items():
        last = bindings[-1]
        if last.kind == "import" and last.qualified:
            exports[name] = last.qualified
            continue
        if last.kind in ("assign", "annassign", "with", "def") and last.value is not None:
            value = analysis.classifier.classify_binding(last)
            if value.kind in STATE:
                state[name] = (value.kind.value, analysis.line_of(last.value))

    on_import = walk.after_import
    start_method = None
    for site in analysis.symbols.calls:
        name = analysis.classifier.qualified_name(site.node.func, site.scope, site.order)
        if name == "multiprocessing.set_start_method" and walk.runs_on_import(site.node):
            start_method = (literal_start_method(site.node) or "unknown", analysis.line_of(site.node))
            break
    if start_method is None and analysis.project is not None:
        start_method = analysis.project.imported_start_method(analysis)
    fixed = ExecutionWalk(analysis, tf, detect=lambda call, graph: fixes_default_context(analysis, call),
                          detect_import=lambda statement: tf.import_effect(statement, "fixes_context"),
                          imports_only=True).after_import
    fixes_context = None
    if fixed is not None:
        fixes_context = analysis.tf.external_starts.get(fixed.call) or Effect(fixed.reason, place(fixed.call))
    return ModuleSummary(
        module=module, path=display, functions=functions, state=state,
        on_import=(tf.external_starts.get(on_import.call) or Effect(on_import.reason, place(on_import.call)))
        if on_import is not None else None,
        start_method=start_method, exports=exports,
        star_exports=tuple(analysis.symbols.star_imports), fixes_context=fixes_context,
    )
