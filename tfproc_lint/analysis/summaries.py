"""What one module of a project offers the others (its summary), read off its own analysis.

For each top-level function, class constructor and method: whether calling it starts TensorFlow's
runtime (and why, where), what kind of TensorFlow state it returns, whether it runs TensorFlow
(a worker that uses TF) and what it builds on every call that one build per worker could serve,
each worked out when an importing module first asks (through the calls it makes, resolved by
analysis/project_calls.py: other modules' facts compose in); for each class, the constructor that
making an object runs (its own, inherited, a dataclass's `__post_init__`) and whether it is a
`Process` subclass; for a factory, the project class it returns; the module-level names that hold
TensorFlow state; what importing the module does (starts the runtime, sets or fixes the start
method); and the names it re-exports. Only what importing the module runs is walked up front.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import libcst as cst

from tfproc_lint.analysis.execution import ExecutionWalk
from tfproc_lint.analysis.kinds import STATE, Kind
from tfproc_lint.analysis.per_task import movable_builders
from tfproc_lint.analysis.project_calls import constructor, process_base, project_bases, project_class_of
from tfproc_lint.analysis.project_names import Effect, FunctionFacts, ModuleSummary, Place
from tfproc_lint.analysis.settings import settings_made
from tfproc_lint.analysis.start_methods import fixes_default_context
from tfproc_lint.analysis.symbols import ClassInfo
from tfproc_lint.analysis.values import literal_start_method
from tfproc_lint.analysis.walk import is_main_guard
from tfproc_lint.knowledge import processes


class _LazyFunctions(Mapping):
    """A summary's functions, each worked out when first asked for: an importing module asks for
    a few names of a module that may define hundreds."""

    def __init__(self, infos: dict, compute, unknown) -> None:
        self._infos = infos
        self._compute = compute
        self._unknown = unknown  # the facts of a function asked for again while its own are worked out
        self._computing: set[str] = set()
        self.done: dict[str, FunctionFacts] = {}

    def __getitem__(self, name: str) -> FunctionFacts:
        if name not in self.done:
            if name in self._computing:  # a call cycle back into it (a.f -> b.g -> a.f): cut, nothing known
                return self._unknown(name, self._infos[name])
            self._computing.add(name)
            try:
                self.done[name] = self._compute(name, self._infos[name])
            finally:
                self._computing.discard(name)
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
        if isinstance(info, ClassInfo):  # a constructor defined in neither the class nor this file
            return _inherited_constructor(analysis, name, info, place(info.node.name))
        after = walk.function(info, None, False, depth=1)
        starts = None
        if after is not None and hasattr(after, "reason"):
            starts = tf.external_starts.get(after.call) or Effect(after.reason, place(after.call))
        returned = analysis.classifier.returned_value(info, 0)
        returns = returned.kind.value if returned.kind in STATE else None
        builders = movable_builders(analysis, info)
        builds = Effect(f"`{analysis.code(builders[0], 40)}`", place(builders[0])) if builders else None
        ray_task = "." not in name and analysis.engine_routes.ray_remote_options(info) is not False
        made = classes.get(name)  # a constructor: the class whose object it makes
        holds = ()
        if made is not None:
            holds = tuple((attribute, value.kind.value, analysis.line_of(value.origin))
                          for attribute, value in analysis.state_attributes(made)
                          if isinstance(value.origin, cst.CSTNode))
        return FunctionFacts(name, place(info.node.name), starts, returns, tf.function_runs(info), builds, ray_task,
                             holds, _instance_of(analysis, module, info),
                             process_base(analysis, made) if made is not None else None,
                             settings_made(analysis, info, place))

    infos = {}
    classes: dict[str, ClassInfo] = {}  # "Class.__init__" -> the class
    module_scope = analysis.symbols.module_scope
    for info in analysis.symbols.functions.values():
        if info.scope.parent is module_scope:
            infos[info.node.name.value] = info
    for klass in analysis.symbols.classes.values():
        if klass.scope.parent is not module_scope:
            continue
        class_name = klass.node.name.value
        methods = _methods(analysis, klass)
        for info in methods:
            infos.setdefault(f"{class_name}.{info.node.name.value}", info)
        # Making an object runs its constructor: defined here, inherited from a base of this file,
        # a dataclass's `__post_init__`, or a project base's (`_inherited_constructor`).
        made_by = constructor(analysis, klass)
        if made_by is not None and made_by.class_info is not klass and made_by not in methods:
            made_by = None  # inherited by a class that overrides its base's methods: not followed
        infos.setdefault(f"{class_name}.__init__", made_by or klass)
        classes[f"{class_name}.__init__"] = klass
    functions = _LazyFunctions(infos, facts, lambda name, info: FunctionFacts(name, place(info.node.name)))

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
    for site in analysis.calls.named(processes.SET_START_METHOD):
        if walk.runs_on_import(site.node):
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
        on_import=_import_effect(analysis, walk, on_import, place) if on_import is not None else None,
        start_method=start_method, exports=exports,
        star_exports=tuple(analysis.symbols.star_imports), fixes_context=fixes_context,
    )


def _methods(analysis, klass: ClassInfo) -> list:
    """The methods of `klass`, then those it inherits from classes of this module, unless it
    overrides one of them: an inherited method's facts are worked out in its own class, where
    `self.m()` calls the base's `m`, not the override."""
    lineage = analysis.classifier.class_lineage(klass)
    by_class = {id(local): [info for info in analysis.symbols.functions.values() if info.class_info is local]
                for local in lineage}
    own = by_class[id(klass)]
    overridden = {info.node.name.value for info in own} - {"__init__"}
    inherited = [info for local in lineage[1:] for info in by_class[id(local)]]
    if overridden & {info.node.name.value for info in inherited}:
        return own
    return own + inherited


def _inherited_constructor(analysis, name: str, klass: ClassInfo, where: Place) -> FunctionFacts:
    """A class with no constructor in this file: its first project base's (another module's), or
    none (only what it derives from: a `Process` subclass)."""
    project = analysis.project
    for base in project_bases(analysis, klass):
        inherited = project.function(f"{base}.__init__")
        if inherited is not None:
            return replace(inherited, name=name, place=where, process_base=inherited.process_base
                           or process_base(analysis, klass))
    return FunctionFacts(name, where, process_base=process_base(analysis, klass))


def _instance_of(analysis, module: str, info) -> str | None:
    """The project class (qualified) of the object every `return` of `info` gives, or None."""
    found = set()
    end = analysis.symbols.end_of_file
    for returned in info.returns:
        if returned.value is None:
            continue
        value = analysis.classifier.classify(returned.value, info.scope, end)
        klass = value.info if isinstance(value.info, ClassInfo) and value.kind is not Kind.CLASS else None
        if klass is not None and klass.scope.parent is analysis.symbols.module_scope:
            found.add(f"{module}.{klass.node.name.value}")
        else:
            found.add(project_class_of(analysis, returned.value, info.scope, end))
    return found.pop() if len(found) == 1 else None


def _import_effect(analysis, walk: ExecutionWalk, start, place) -> Effect:
    """What importing the module starts, and where. Where that is in another module (this module's
    import-time code calls that module's function), the statement of this module that leads there is
    the trigger: the one to change (`RANKER = load_ranker()`). Through an import of another module,
    that module's effect and trigger."""
    external = analysis.tf.external_starts.get(start.call)
    if external is None:
        return Effect(start.reason, place(start.call))
    if not isinstance(start.call, cst.Call):
        return external
    call = start.call
    statement = _top_level_statement(analysis, call)
    if statement is None:  # in a function the top level calls: the top-level statement that calls it
        statement = _starting_statement(analysis, walk)
        if statement is not None:
            return replace(external, trigger=Effect(f"runs `{analysis.code(statement, 40)}`", place(statement)))
        return external
    return replace(external, trigger=Effect(f"calls {analysis.code(call.func, 40)}()", place(call)))


def _top_level_statement(analysis, node: cst.CSTNode):
    """The module-level statement that holds `node`, None when `node` is in a function or method."""
    found = None
    for parent in analysis.ancestors(node):
        if isinstance(parent, (cst.FunctionDef, cst.Lambda)):
            return None
        if isinstance(parent, cst.BaseStatement):
            found = parent
    return found if found is not None and any(found is s for s in analysis.module.body) else None


def _starting_statement(analysis, walk: ExecutionWalk):
    """The module-level statement during which importing the module starts the runtime: the last
    one (outside the `__main__` block, not a definition) that begins with nothing started."""
    found = None
    for statement in analysis.module.body:
        if is_main_guard(statement) or isinstance(statement, cst.FunctionDef):
            continue
        known, state = walk.state_at_start(statement)
        if known and state is None:
            found = statement
    if isinstance(found, cst.SimpleStatementLine) and len(found.body) == 1:
        return found.body[0]
    return found
