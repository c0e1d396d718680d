"""TFP201 fix: start the workers from `multiprocessing.get_context("spawn")`."""

from __future__ import annotations

import libcst as cst

from tfproc_lint.analysis.file_analysis import FileAnalysis, Owner
from tfproc_lint.analysis.values import Kind, keyword
from tfproc_lint.diagnostics import Applicability
from tfproc_lint.fixes.common import add_import, add_keyword, replace_nodes, runs_only_in_the_parent, spawn_context
from tfproc_lint.rules.base import FixBuilder

_MODULES = ("multiprocessing", "torch.multiprocessing", "multiprocess", "billiard")


class UseSpawnContext(FixBuilder):
    title = 'start the workers from multiprocessing.get_context("spawn")'
    applicability = Applicability.UNSAFE

    def __init__(self, owner: Owner) -> None:
        self.owner = owner

    def build(self, analysis: FileAnalysis) -> cst.Module | None:
        owner, call = self.owner, self.owner.construction
        if owner.value.method is not None or owner.value.info is not None:
            return None  # an explicit context, or a Process subclass: manual edit required
        if not runs_only_in_the_parent(analysis, call):
            return None  # spawn re-imports the main module: module-level workers need a guard first
        if not all(worker.kind == "function" and worker.function is not None
                   and worker.function.scope.parent.kind in ("module", "class") for worker in owner.workers):
            return None  # spawn must pickle the worker: only module-level functions qualify
        mapping: dict = {}
        if owner.value.kind is Kind.EXECUTOR:
            if keyword(call, "mp_context") is not None:
                return None
            name = add_import(analysis, "multiprocessing", mapping)
            if name is None:
                return None
            mapping[call] = lambda updated: add_keyword(updated, "mp_context", spawn_context(name))
            return replace_nodes(analysis.module, mapping)
        module_name, attribute = self._module_and_attribute(analysis)
        if module_name is None:
            return None
        if module_name.startswith("@"):  # `from multiprocessing import Pool`: import the module
            module_name = add_import(analysis, module_name[1:], mapping)
            if module_name is None:
                return None
        new_func = cst.Attribute(spawn_context(module_name), cst.Name(attribute))
        mapping[call.func] = new_func
        return replace_nodes(analysis.module, mapping)

    def _module_and_attribute(self, analysis: FileAnalysis) -> tuple[str | None, str]:
        """`mp.Pool` -> ("mp", "Pool"); `Pool` from multiprocessing -> ("@multiprocessing", "Pool")."""
        call, site = self.owner.construction, self.owner.site
        func = call.func
        attribute = "Pool" if self.owner.value.kind is Kind.POOL else "Process"
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.attr.value == attribute:
            bindings = analysis.symbols.bindings_at(func.value.value, site.scope, site.order)
            if len(bindings) == 1 and bindings[0].kind == "import" and bindings[0].qualified in _MODULES:
                return func.value.value, attribute
            return None, attribute
        if isinstance(func, cst.Name):
            bindings = analysis.symbols.bindings_at(func.value, site.scope, site.order)
            if len(bindings) == 1 and bindings[0].kind == "import" and bindings[0].qualified:
                module, _, name = bindings[0].qualified.rpartition(".")
                module = {"multiprocessing.pool": "multiprocessing", "multiprocessing.context": "multiprocessing"}.get(
                    module, module)
                if module in _MODULES and "." not in module and name == attribute:
                    return "@" + module, attribute
        return None, attribute
