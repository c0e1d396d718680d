"""Which project function a call reaches: the one resolver behind every fact that composes over calls.

A function's facts (`FunctionFacts.starts`, `runs_tf`: summaries.py, tf_usage.py, execution.py)
include what the functions, constructors and methods it calls do. A call reaches
- a function of its own file (`ModuleFacts.callee`): a function, a method, a constructor (a
  class's `__init__`, inherited from a local base, or a dataclass's `__post_init__`), and
  `super().method()` (`local_callee` here);
- a function of another project module (`project_callee`), whose facts that module's summary works
  out the same way: by name through imports and re-exports (`build()`, `models.build()`, a class
  for its constructor), `super().method()` of a project base class, and `obj.method()` on an object
  of a project class: `obj` bound once to `Class(...)` or to a project factory that returns one
  (`make_detector()`), `Class(...).method()`, `self.attr.method()` where the constructor assigned
  `self.attr` so; calling such an object (`objective(x)`, `self.objective(x)`) runs its `__call__`.
Depth is bounded by the summaries of summaries (project.py's MAX_SUMMARY_DEPTH: modules further
away are read file by file) and, within a file, by the walks' own depths; a module already being
summarised is not summarised again (project.py), which cuts cycles. `analysis` is a module's
`ModuleFacts` (not imported here: it imports this module).
"""

from __future__ import annotations

import libcst as cst

from tfproc_lint.analysis.project_names import FunctionFacts
from tfproc_lint.analysis.kinds import Kind
from tfproc_lint.analysis.symbols import CallSite, ClassInfo, FunctionInfo, Scope
from tfproc_lint.analysis.values import enclosing_function
from tfproc_lint.knowledge import processes

MAX_BINDING_STEPS = 3  # `d = make(); self.d = d; self.d.run()`: assignments followed to the object made
DATACLASS_DECORATORS = frozenset({"dataclasses.dataclass"})


def project_callee(analysis, call: cst.Call, site: CallSite) -> FunctionFacts | None:
    """The facts of the function of another project module that `call` runs, or None."""
    project = analysis.project
    if project is None:
        return None
    func = call.func
    facts = project.function(analysis.classifier.qualified_name(func, site.scope, site.order))
    if facts is not None:
        return facts
    called = _called_object(analysis, func, site)
    if called is not None:  # `objective(x)`: an object of a project class runs its `__call__`
        return called
    if not isinstance(func, cst.Attribute):
        return None
    base = _super_base(analysis, func.value, site.scope)
    if base is not None:
        return project.function(f"{base}.{func.attr.value}")
    klass = project_class_of(analysis, func.value, site.scope, site.order)
    return project.function(f"{klass}.{func.attr.value}") if klass is not None else None


def _called_object(analysis, func: cst.BaseExpression, site: CallSite) -> FunctionFacts | None:
    """The facts of `Class.__call__` when `func` is an object of a project class of another module
    (a name or `self.attr` bound to one, or `Class(...)` itself)."""
    if not isinstance(func, (cst.Name, cst.Attribute, cst.Call)):
        return None
    klass = project_class_of(analysis, func, site.scope, site.order)
    return analysis.project.function(f"{klass}.__call__") if klass is not None else None


def project_class_of(analysis, node: cst.BaseExpression, scope: Scope, order: int,
                     steps: int = 0) -> str | None:
    """The qualified name of the project class (of another module) whose object `node` is, or None."""
    if steps > MAX_BINDING_STEPS:
        return None
    if isinstance(node, cst.Name):
        binding = analysis.symbols.assigned_call(node.value, scope, order)
        return project_class_of(analysis, binding.value, binding.scope, binding.order, steps + 1) \
            if binding is not None else None
    if isinstance(node, cst.Attribute):  # self.attr, assigned once while the object is made
        klass = analysis.classifier.instance_class(node.value, scope, order)
        if klass is None:
            return None
        bindings = [b for b in analysis.classifier.class_attributes(klass).get(node.attr.value, ())
                    if b.value is not None]
        if len(bindings) != 1:
            return None
        return project_class_of(analysis, bindings[0].value, bindings[0].scope, bindings[0].order, steps + 1)
    if not isinstance(node, cst.Call) or analysis.project is None:
        return None
    name = analysis.classifier.qualified_name(node.func, scope, order)
    facts = analysis.project.function(name)
    if facts is None:
        return None
    return name if facts.name.endswith(".__init__") else facts.instance_of


def local_callee(analysis, call: cst.Call, site: CallSite) -> FunctionInfo | None:
    """`super().method()` in a method of a class of this file whose base (of this file) defines it."""
    func = call.func
    if not isinstance(func, cst.Attribute):
        return None
    method = enclosing_function(site.scope)
    if method is None or method.class_info is None or not _is_super(analysis, func.value, site.scope):
        return None
    for base in local_bases(analysis, method.class_info):
        found = analysis.classifier.method_of_class(base, func.attr.value)
        if found is not None:
            return found
    return None


def constructor(analysis, klass: ClassInfo) -> FunctionInfo | None:
    """What making an object of a class of this file runs: its `__init__` (its own or a local
    base's), else a dataclass's `__post_init__`."""
    found = analysis.classifier.method_of_class(klass, "__init__")
    if found is None and is_dataclass(analysis, klass):
        found = analysis.classifier.method_of_class(klass, "__post_init__")
    return found


def is_dataclass(analysis, klass: ClassInfo) -> bool:
    """`@dataclass` or `@dataclasses.dataclass(...)` without `init=False`."""
    order = analysis.symbols.order_of_node.get(klass.node, analysis.symbols.end_of_file)
    for decorator in klass.node.decorators:
        expression = decorator.decorator
        call = expression if isinstance(expression, cst.Call) else None
        if call is not None:
            if any(arg.keyword is not None and arg.keyword.value == "init" for arg in call.args):
                continue
            expression = call.func
        if analysis.classifier.qualified_name(expression, klass.outer, order) in DATACLASS_DECORATORS:
            return True
    return False


def local_bases(analysis, klass: ClassInfo) -> list[ClassInfo]:
    return [base for base in analysis.classifier.class_lineage(klass) if base is not klass]


def project_bases(analysis, klass: ClassInfo) -> list[str]:
    """The qualified names of the bases of `klass` (and its local bases) that are classes of
    other project modules."""
    project = analysis.project
    if project is None:
        return []
    found = []
    for local in analysis.classifier.class_lineage(klass):
        for base in local.node.bases:
            name = analysis.classifier.qualified_name(base.value, local.outer, analysis.symbols.end_of_file)
            if name and project.function(f"{name}.__init__") is not None:
                found.append(name)
    return found


def process_base(analysis, klass: ClassInfo) -> str | None:
    """The library `Process` class a class of this file derives from (through its local bases;
    a project base's is in that base's facts), or None."""
    for local in analysis.classifier.class_lineage(klass):
        for base in local.node.bases:
            name = analysis.classifier.qualified_name(base.value, local.outer, analysis.symbols.end_of_file)
            if processes.PROCESS_BASES.get(name) is Kind.PROCESS or name in processes.PROCESS_CLASS_START_METHODS:
                return name
    return None


def _super_base(analysis, receiver: cst.BaseExpression, scope: Scope) -> str | None:
    """`super()` in a method of a class of this file whose first project base is another module's."""
    method = enclosing_function(scope)
    if method is None or method.class_info is None or not _is_super(analysis, receiver, scope):
        return None
    bases = project_bases(analysis, method.class_info)
    return bases[0] if bases else None


def _is_super(analysis, node: cst.BaseExpression, scope: Scope) -> bool:
    return (isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "super"
            and not analysis.symbols.bindings_at("super", scope, analysis.symbols.end_of_file))
