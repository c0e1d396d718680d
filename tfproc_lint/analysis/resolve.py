"""The canonical qualified name a name or attribute refers to, through the module's imports and
plain aliases (`Session = tf.compat.v1.Session`), as the symbol table resolves it."""

from __future__ import annotations

import libcst as cst

from tfproc_lint.analysis.names import canonical
from tfproc_lint.analysis.symbols import Scope, SymbolTable
from tfproc_lint.analysis.values import MAX_DEPTH


class NameResolver:
    """Part of `Classifier`."""

    symbols: SymbolTable

    def qualified_name(self, node: cst.BaseExpression, scope: Scope, order: int, depth: int = 0,
                       raw: bool = False) -> str | None:
        """The canonical qualified name an expression refers to: `tf.compat.v1.Session` ->
        `tensorflow.Session`; with `raw`, the import path as spelled (`tensorflow.compat.v1.Session`)."""
        if depth > MAX_DEPTH:
            return None
        name_of = (lambda name: name) if raw else canonical
        if isinstance(node, cst.Name):
            bindings = self.symbols.bindings_at(node.value, scope, order)
            if len(bindings) != 1:
                return None
            binding = bindings[0]
            if binding.kind == "import":
                return name_of(binding.qualified)
            if binding.kind == "assign" and isinstance(binding.value, (cst.Name, cst.Attribute)):
                # `Session = tf.compat.v1.Session`: an alias, followed one step.
                return self.qualified_name(binding.value, binding.scope, binding.order, depth + 1, raw)
            return None
        if isinstance(node, cst.Attribute):
            head = self.qualified_name(node.value, scope, order, depth + 1, raw)
            return name_of(f"{head}.{node.attr.value}") if head else None
        return None
