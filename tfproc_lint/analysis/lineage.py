"""The classes of one module: their local bases (lineage), methods, the `self.x` attributes set
while an object is constructed, and the library kind or start method a class derives."""

from __future__ import annotations

import libcst as cst

from tfproc_lint.analysis.kinds import PROCESS_OWNERS, STATE, Kind
from tfproc_lint.analysis.symbols import Binding, ClassInfo, FunctionInfo, Scope, SymbolTable
from tfproc_lint.analysis.values import UNKNOWN, Value, enclosing_function, keyword, merge
from tfproc_lint.analysis.walk import calls_in
from tfproc_lint.knowledge import processes, tensorflow

_BASE_KINDS = {**tensorflow.STATE_BASES, **processes.PROCESS_BASES}


class ClassLineage:
    """Part of `Classifier`, whose `classify` and `qualified_name` it uses: a base class is found
    by classifying the base expression, and an attribute by classifying what was assigned."""

    symbols: SymbolTable

    def instance_class(self, node, scope: Scope, order: int, depth: int = 0) -> ClassInfo | None:
        """The class of `node` when it is `self` in a method or an instance of a local class."""
        if isinstance(node, cst.Name):
            function = enclosing_function(scope)
            if function is not None and function.class_info is not None and node.value == function.self_name:
                if self.symbols.resolving_scope(node.value, scope) is function.scope:
                    return function.class_info
        value = self.classify(node, scope, order, depth + 1)
        if value.kind is Kind.INSTANCE:
            return value.info
        if value.kind in STATE | PROCESS_OWNERS and isinstance(value.info, ClassInfo):
            return value.info
        return None

    def class_attribute(self, info: ClassInfo, attr: str, depth: int = 0) -> Value:
        """The kind of `self.attr` as assigned in the parent: in `__init__` and helpers it calls."""
        bindings = [b for b in self.class_attributes(info).get(attr, []) if b.value is not None]
        if not bindings:
            return UNKNOWN
        return merge(self.classify(b.value, b.scope, b.order, depth + 1) for b in bindings)

    def class_attributes(self, info: ClassInfo) -> dict[str, list[Binding]]:
        """`self.x = ...` bindings made while the object is constructed (__init__ and the
        methods __init__ calls as `self.m()`), in this class and its local base classes."""
        result: dict[str, list[Binding]] = {}
        for klass in self.class_lineage(info):
            constructing = constructor_methods(klass)
            for name, bindings in klass.attributes.items():
                for binding in bindings:
                    method = enclosing_function(binding.scope)
                    if method is not None and method.node.name.value in constructing:
                        result.setdefault(name, []).append(binding)
        return result

    def class_lineage(self, info: ClassInfo) -> list[ClassInfo]:
        lineage, pending = [], [info]
        while pending and len(lineage) < 8:
            klass = pending.pop()
            if klass in lineage:
                continue
            lineage.append(klass)
            for base in klass.node.bases:
                order = self.symbols.order_of_node.get(klass.node, self.symbols.end_of_file)
                value = self.classify(base.value, klass.outer, order)
                if value.kind is Kind.CLASS and isinstance(value.info, ClassInfo):
                    pending.append(value.info)
        return lineage

    def class_base_kind(self, info: ClassInfo) -> Kind | None:
        """The library kind a local class derives from (keras.Model, Process, executors, a
        multiprocessing context class)."""
        for klass in self.class_lineage(info):
            for base in klass.node.bases:
                name = self.qualified_name(base.value, klass.outer, self.symbols.end_of_file)
                if name in _BASE_KINDS:
                    return _BASE_KINDS[name]
                if name in processes.CONTEXT_CLASSES or self._context_type_of(base.value, klass.outer):
                    return Kind.CONTEXT
                base_value = self.classify(base.value, klass.outer, self.symbols.end_of_file)
                if base_value.kind is Kind.CONTEXT and isinstance(base.value, cst.Attribute):
                    if base.value.attr.value == "Process":
                        return Kind.PROCESS
        return None

    def class_context_method(self, info: ClassInfo) -> str | None:
        """The start method of a local context class (`class C(ForkContext)`,
        `class C(type(multiprocessing.get_context("fork")))`)."""
        for klass in self.class_lineage(info):
            for base in klass.node.bases:
                name = self.qualified_name(base.value, klass.outer, self.symbols.end_of_file)
                if name in processes.CONTEXT_CLASSES:
                    return processes.CONTEXT_CLASSES[name]
                method = self._context_type_of(base.value, klass.outer)
                if method:
                    return method
        return None

    def _context_set_in_init(self, info: ClassInfo) -> str | None:
        """A Pool subclass that passes its own context: `super().__init__(..., context=C())` or
        `kwargs["context"] = C()` in its `__init__`."""
        init = self.method_of_class(info, "__init__")
        if init is None:
            return None
        candidates = [keyword(call, "context") for call in calls_in(init.node.body)]
        for statement in init.node.body.body:
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if isinstance(small, cst.Assign) and any(
                            isinstance(t.target, cst.Subscript) and "context" in self.symbols.module_node.code_for_node(
                                t.target.slice[0]) for t in small.targets):
                        candidates.append(small.value)
        for candidate in candidates:
            if candidate is not None:
                context = self.classify(candidate, init.scope, self.symbols.end_of_file)
                if context.kind is Kind.CONTEXT:
                    return context.method or "default"
        return None

    def _context_type_of(self, node: cst.BaseExpression, scope: Scope) -> str | None:
        """`type(multiprocessing.get_context("fork"))` -> "fork"."""
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "type" \
                and len(node.args) == 1 and not self.symbols.bindings_at("type", scope, self.symbols.end_of_file):
            inner = self.classify(node.args[0].value, scope, self.symbols.end_of_file)
            if inner.kind is Kind.CONTEXT:
                return inner.method or "default"
        return None

    def method_of_class(self, klass: ClassInfo, name: str) -> FunctionInfo | None:
        for info in self.class_lineage(klass):
            for statement in info.node.body.body:
                if isinstance(statement, cst.FunctionDef) and statement.name.value == name:
                    return self.symbols.functions.get(statement)
        return None


def constructor_methods(info: ClassInfo) -> set[str]:
    """`__init__` plus the methods it calls as `self.name(...)` (one level)."""
    if info.constructors is not None:
        return info.constructors
    names = info.constructors = {"__init__"}
    for statement in info.node.body.body:
        if isinstance(statement, cst.FunctionDef) and statement.name.value == "__init__":
            params = statement.params.params
            if not params:
                break
            self_name = params[0].name.value
            for call in calls_in(statement.body):
                func = call.func
                if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                        and func.value.value == self_name:
                    names.add(func.attr.value)
    return names
