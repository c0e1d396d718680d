"""A lean symbol table over a LibCST module, built in one traversal.

LibCST's ScopeProvider + QualifiedNameProvider cost about 5x a bare parse on real TensorFlow code
(see docs/design.md); this table records only what the rules ask: per scope, the bindings of each
name (imports with their qualified names, assignments with their values, definitions, parameters),
`self.x = ...` attributes per class, and every call site with its scope and textual order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

import libcst as cst

from tfproc_lint.analysis.walk import child_nodes, is_main_guard
from tfproc_lint.project_layout import absolute_module


@dataclass(eq=False)
class Binding:
    name: str
    kind: str  # import | assign | def | class | param | with | for | except | unpack
    order: int
    scope: "Scope"  # where the bound value's own names resolve
    value: cst.CSTNode | None = None  # assigned expression, with-item, FunctionDef, ClassDef
    qualified: str | None = None  # imports: "tensorflow.compat.v1"
    unpack_index: int | None = None  # `a, b = value`: the position of this name


@dataclass(eq=False)
class Scope:
    kind: str  # module | class | function | lambda | comprehension
    node: cst.CSTNode
    parent: "Scope | None"
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    global_names: set[str] = field(default_factory=set)
    nonlocal_names: set[str] = field(default_factory=set)
    class_info: "ClassInfo | None" = None  # for class scopes
    function: "FunctionInfo | None" = None  # for function scopes

    def add(self, binding: Binding) -> None:
        self.bindings.setdefault(binding.name, []).append(binding)

    @property
    def module(self) -> "Scope":
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope


@dataclass(eq=False)
class ClassInfo:
    node: cst.ClassDef
    scope: Scope  # the class body scope
    outer: Scope  # where the bases resolve
    attributes: dict[str, list[Binding]] = field(default_factory=dict)  # self.x = ... by method
    constructors: set[str] | None = None  # __init__ and the methods it calls (values.py)


@dataclass(eq=False)
class FunctionInfo:
    node: cst.FunctionDef
    scope: Scope  # the function's own scope
    class_info: ClassInfo | None  # set for methods
    order: int
    returns: list[cst.Return] = field(default_factory=list)

    @property
    def decorator_names(self) -> list[str]:
        return [_dotted(d.decorator) for d in self.node.decorators]

    @property
    def self_name(self) -> str | None:
        params = self.node.params.params
        if self.class_info is None or not params:
            return None
        if any(name.endswith(("staticmethod", "classmethod")) for name in self.decorator_names):
            return None
        return params[0].name.value


@dataclass(eq=False)
class CallSite:
    node: cst.Call
    scope: Scope
    order: int


def _dotted(node: cst.BaseExpression) -> str:
    """`a.b.c` -> "a.b.c"; a call `f(...)` -> the callee's dotted name; otherwise ""."""
    if isinstance(node, cst.Call):
        return _dotted(node.func)
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr.value}" if head else ""
    return ""


dotted_name = _dotted


def import_base(node: cst.ImportFrom, package: str | None) -> str | None:
    """The absolute module `from base import ...` names; a relative import (the project's own
    modules) only when the importing module's package is known."""
    module = _dotted(node.module) if node.module is not None else ""
    return absolute_module(len(node.relative), module, package)


def imported_module_names(node: cst.Import | cst.ImportFrom, package: str | None) -> list[str]:
    """The modules an import statement may run: `import a.b` -> a.b; `from a import b` -> a and
    a.b (b may be a submodule)."""
    if isinstance(node, cst.Import):
        return [_dotted(alias.name) for alias in node.names]
    base = import_base(node, package)
    if base is None:
        return []
    if isinstance(node.names, cst.ImportStar):
        return [base]
    return [base, *(f"{base}.{_dotted(alias.name)}" for alias in node.names)]


class SymbolTable:
    """Scopes, bindings, classes, functions and call sites of one module."""

    def __init__(self, module: cst.Module, package: str | None = None) -> None:
        """`package`: the package relative imports start from (project analysis), or None: they
        stay unresolved."""
        self.module_node = module
        collector = _Collector(module, package)
        collector.walk(module)
        self.module_scope: Scope = collector.module_scope
        self.calls: list[CallSite] = collector.calls
        self.functions: dict[cst.FunctionDef, FunctionInfo] = collector.functions
        self.classes: dict[cst.ClassDef, ClassInfo] = collector.classes
        self.scope_of_node: dict[cst.CSTNode, Scope] = collector.scope_of_node
        self.order_of_node: dict[cst.CSTNode, int] = collector.order_of_node
        self.imported_modules: set[str] = collector.imported_modules
        self.star_imports: list[str] = collector.star_imports  # `from m import *`: the modules
        self.main_guard_orders: list[tuple[int, int]] = collector.main_guard_orders
        self.subscript_stores: list[CallSite] = collector.subscript_stores  # `x[k] = v` statements
        # The textual order of the end of the file, after every binding and call: a name looked
        # up there sees the last binding in its own scope (and every binding of enclosing scopes).
        self.end_of_file: int = collector.counter + 1

    def in_main_guard(self, binding: Binding) -> bool:
        """The binding is made by the module's `if __name__ == "__main__":` block."""
        return any(start < binding.order <= end for start, end in self.main_guard_orders)

    # Name resolution ---------------------------------------------------------------------------
    def resolving_scope(self, name: str, scope: Scope) -> Scope | None:
        """The scope whose binding of `name` a use in `scope` sees (Python's LEGB, class-aware)."""
        if name in scope.global_names:
            return scope.module
        if name in scope.nonlocal_names:
            current = scope.parent
            while current is not None and not (current.kind == "function" and name in current.bindings):
                current = current.parent
            return current
        current: Scope | None = scope
        first = True
        while current is not None:
            # A class body's names are invisible to the functions nested in it.
            if (first or current.kind != "class") and name in current.bindings:
                return current
            first = False
            current = current.parent
        return None

    def bindings_at(self, name: str, scope: Scope, order: int) -> list[Binding]:
        """The bindings that may reach a use of `name` at `order` in `scope`.

        In the same scope: the last binding textually before the use (flow-insensitive within
        branches, which prefers a miss: `sess = None` before the call hides a later session).
        From an enclosing scope: every binding there (the use may run at any time).
        """
        owner = self.resolving_scope(name, scope)
        if owner is None:
            return []
        bindings = owner.bindings[name]
        running = scope  # comprehensions run in place, in their enclosing scope's flow
        while running.kind == "comprehension" and running.parent is not None:
            running = running.parent
        if owner is running:
            before = [b for b in bindings if b.order < order]
            if before:
                return [before[-1]]
        return list(bindings)

    def assigned_call(self, name: str, scope: Scope, order: int) -> Binding | None:
        """The one binding of `name` that reaches a use at `order`, when it assigns a call's result
        (`handle = Actor.remote()`): its `value` is that call."""
        bindings = self.bindings_at(name, scope, order)
        if len(bindings) == 1 and bindings[0].kind == "assign" and isinstance(bindings[0].value, cst.Call):
            return bindings[0]
        return None

    def iter_scopes(self) -> Iterator[Scope]:
        seen: set[int] = set()
        for scope in self.scope_of_node.values():
            if id(scope) not in seen:
                seen.add(id(scope))
                yield scope


class _Collector:
    """One read-only walk (see walk.py) that records scopes, bindings and call sites."""

    def __init__(self, module: cst.Module, package: str | None = None) -> None:
        self.package = package
        self.star_imports: list[str] = []
        self.module_scope = Scope("module", module, None)
        self.scope = self.module_scope
        self.counter = 0
        self.calls: list[CallSite] = []
        self.functions: dict[cst.FunctionDef, FunctionInfo] = {}
        self.classes: dict[cst.ClassDef, ClassInfo] = {}
        self.scope_of_node: dict[cst.CSTNode, Scope] = {module: self.module_scope}
        self.order_of_node: dict[cst.CSTNode, int] = {}
        self.imported_modules: set[str] = set()
        self.function_stack: list[FunctionInfo] = []
        self.main_guard_orders: list[tuple[int, int]] = []
        self.subscript_stores: list[CallSite] = []
        self.handlers = {
            cst.If: self.on_if,
            cst.Import: self.on_import,
            cst.ImportFrom: self.on_import_from,
            cst.FunctionDef: self.on_function,
            cst.Lambda: self.on_lambda,
            cst.ClassDef: self.on_class,
            cst.ListComp: self.on_comprehension,
            cst.SetComp: self.on_comprehension,
            cst.GeneratorExp: self.on_comprehension,
            cst.DictComp: self.on_comprehension,
            cst.Global: self.on_global,
            cst.Nonlocal: self.on_nonlocal,
            cst.Assign: self.on_assign,
            cst.AnnAssign: self.on_ann_assign,
            cst.AugAssign: self.on_aug_assign,
            cst.NamedExpr: self.on_named_expr,
            cst.WithItem: self.on_with_item,
            cst.For: self.on_for,
            cst.ExceptHandler: self.on_except,
            cst.Call: self.on_call,
            cst.Return: self.on_return,
        }

    def walk(self, node: cst.CSTNode) -> None:
        handler = self.handlers.get(type(node))
        if handler is not None:
            handler(node)
        else:
            for child in child_nodes(node):
                self.walk(child)

    def walk_children(self, node: cst.CSTNode) -> None:
        for child in child_nodes(node):
            self.walk(child)

    # helpers ------------------------------------------------------------------------------------
    def _tick(self) -> int:
        self.counter += 1
        return self.counter

    def _target_scope(self, name: str) -> Scope:
        if name in self.scope.global_names:
            return self.module_scope
        if name in self.scope.nonlocal_names:
            current = self.scope.parent
            while current is not None and current.kind != "function":
                current = current.parent
            return current or self.module_scope
        return self.scope

    def _bind(self, name: str, kind: str, value=None, qualified=None, unpack_index=None) -> None:
        binding = Binding(name, kind, self._tick(), self.scope, value, qualified, unpack_index)
        self._target_scope(name).add(binding)

    def _bind_target(self, target: cst.BaseExpression, kind: str, value, index=None) -> None:
        if isinstance(target, cst.Name):
            self._bind(target.value, kind, value, unpack_index=index)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for position, element in enumerate(target.elements):
                inner = element.value
                if isinstance(element, cst.StarredElement):
                    self._bind_target(inner, kind, None)
                else:
                    self._bind_target(inner, "unpack" if kind == "assign" else kind, value, position)
        elif isinstance(target, cst.Attribute):
            self._bind_attribute(target, value)
        elif isinstance(target, cst.StarredElement):
            self._bind_target(target.value, kind, None)

    def _bind_attribute(self, target: cst.Attribute, value) -> None:
        """Record `self.x = value` in the enclosing class."""
        if not self.function_stack or value is None:
            return
        function = self.function_stack[-1]
        if function.class_info is None or not isinstance(target.value, cst.Name):
            return
        if target.value.value != function.self_name:
            return
        binding = Binding(target.attr.value, "assign", self._tick(), self.scope, value)
        function.class_info.attributes.setdefault(target.attr.value, []).append(binding)

    def _push(self, kind: str, node: cst.CSTNode) -> Scope:
        scope = Scope(kind, node, self.scope)
        self.scope_of_node[node] = scope
        self.scope = scope
        return scope

    def _pop(self) -> None:
        assert self.scope.parent is not None
        self.scope = self.scope.parent

    # imports ------------------------------------------------------------------------------------
    def on_import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = _dotted(alias.name)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self._bind(alias.asname.name.value, "import", qualified=full)
            else:
                head = full.split(".")[0]
                self._bind(head, "import", qualified=head)
            self.imported_modules.add(full)

    def on_import_from(self, node: cst.ImportFrom) -> None:
        base = self.import_base(node)
        if isinstance(node.names, cst.ImportStar):
            if base and self.scope is self.module_scope:
                self.star_imports.append(base)
            return
        for alias in node.names:
            imported = _dotted(alias.name)
            local = imported
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self._bind(local, "import", alias, qualified=f"{base}.{imported}" if base else None)
        if base:
            self.imported_modules.add(base)

    def import_base(self, node: cst.ImportFrom) -> str | None:
        return import_base(node, self.package)

    # definitions --------------------------------------------------------------------------------
    def on_function(self, node: cst.FunctionDef) -> None:
        for decorator in node.decorators:
            self.walk(decorator)
        self._visit_param_defaults(node.params)
        if node.returns is not None:
            self.walk(node.returns)
        self._bind(node.name.value, "def", node)
        class_info = self.scope.class_info if self.scope.kind == "class" else None
        scope = self._push("function", node)
        info = FunctionInfo(node, scope, class_info, self._tick())
        scope.function = info
        self.functions[node] = info
        self.function_stack.append(info)
        self._bind_params(node.params)
        self.walk(node.body)
        self.function_stack.pop()
        self._pop()

    def on_lambda(self, node: cst.Lambda) -> None:
        self._visit_param_defaults(node.params)
        self._push("lambda", node)
        self._bind_params(node.params)
        self.walk(node.body)
        self._pop()

    def _visit_param_defaults(self, params: cst.Parameters) -> None:
        for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
            if param.default is not None:
                self.walk(param.default)

    def _bind_params(self, params: cst.Parameters) -> None:
        every = [*params.posonly_params, *params.params, *params.kwonly_params]
        for extra in (params.star_arg, params.star_kwarg):
            if isinstance(extra, cst.Param):
                every.append(extra)
        for param in every:
            self._bind(param.name.value, "param", param)

    def on_class(self, node: cst.ClassDef) -> None:
        for decorator in node.decorators:
            self.walk(decorator)
        for base in [*node.bases, *node.keywords]:
            self.walk(base)
        self._bind(node.name.value, "class", node)
        self.order_of_node[node] = self.counter
        outer = self.scope
        scope = self._push("class", node)
        info = ClassInfo(node, scope, outer)
        scope.class_info = info
        self.classes[node] = info
        self.walk(node.body)
        self._pop()

    def on_comprehension(self, node) -> None:
        # The first iterable is evaluated in the enclosing scope.
        self.walk(node.for_in.iter)
        self._push("comprehension", node)
        for_in = node.for_in
        first = True
        while for_in is not None:
            if not first:
                self.walk(for_in.iter)
            first = False
            self._bind_target(for_in.target, "for", for_in.iter)
            for condition in for_in.ifs:
                self.walk(condition)
            for_in = for_in.inner_for_in
        for part in ("elt", "key", "value"):
            child = getattr(node, part, None)
            if child is not None:
                self.walk(child)
        self._pop()

    def on_if(self, node: cst.If) -> None:
        start = self.counter
        self.walk_children(node)
        if self.scope is self.module_scope and is_main_guard(node):
            self.main_guard_orders.append((start, self.counter))

    # statements that bind -----------------------------------------------------------------------
    def on_global(self, node: cst.Global) -> None:
        self.scope.global_names.update(item.name.value for item in node.names)

    def on_nonlocal(self, node: cst.Nonlocal) -> None:
        self.scope.nonlocal_names.update(item.name.value for item in node.names)

    def on_assign(self, node: cst.Assign) -> None:
        self.walk(node.value)
        for target in node.targets:
            self.walk(target.target)
            self._bind_target(target.target, "assign", node.value)
            if isinstance(target.target, cst.Subscript):  # `shared[key] = value`: a route for proxies
                self.subscript_stores.append(CallSite(node, self.scope, self._tick()))

    def on_ann_assign(self, node: cst.AnnAssign) -> None:
        self.walk_children(node)
        if node.value is not None:
            self._bind_target(node.target, "assign", node.value)

    def on_aug_assign(self, node: cst.AugAssign) -> None:
        self.walk_children(node)
        if isinstance(node.target, cst.Name):
            self._bind(node.target.value, "assign", None)

    def on_named_expr(self, node: cst.NamedExpr) -> None:
        self.walk(node.value)
        self._bind_target(node.target, "assign", node.value)

    def on_with_item(self, node: cst.WithItem) -> None:
        self.walk(node.item)
        if node.asname is not None:
            self._bind_target(node.asname.name, "with", node.item)

    def on_for(self, node: cst.For) -> None:
        self.walk(node.iter)
        self._bind_target(node.target, "for", node.iter)
        self.walk(node.body)
        if node.orelse is not None:
            self.walk(node.orelse)

    def on_except(self, node: cst.ExceptHandler) -> None:
        if node.type is not None:
            self.walk(node.type)
        if node.name is not None and isinstance(node.name.name, cst.Name):
            self._bind(node.name.name.value, "except")
        self.walk(node.body)

    # calls and returns ----------------------------------------------------------------------------
    def on_call(self, node: cst.Call) -> None:
        order = self._tick()
        self.order_of_node[node] = order
        self.calls.append(CallSite(node, self.scope, order))
        self.walk_children(node)

    def on_return(self, node: cst.Return) -> None:
        if self.function_stack:
            self.function_stack[-1].returns.append(node)
        self.walk_children(node)
