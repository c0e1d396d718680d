"""TFP201 fix: start the workers from `multiprocessing.get_context("spawn")`."""

from __future__ import annotations

import libcst as cst

from tfproc_lint.analysis.file_analysis import FileAnalysis, Owner
from tfproc_lint.analysis.kinds import Kind
from tfproc_lint.analysis.values import keyword
from tfproc_lint.diagnostics import Applicability
from tfproc_lint.fixes.common import add_import, add_keyword, runs_only_in_the_parent, spawn_context
from tfproc_lint.fixes.base import FixBuilder

_MODULES = ("multiprocessing", "torch.multiprocessing", "multiprocess", "billiard")


class UseSpawnContext(FixBuilder):
    title = 'start the workers from multiprocessing.get_context("spawn")'
    applicability = Applicability.UNSAFE

    def __init__(self, owner: Owner) -> None:
        self.owner = owner

    def plan(self, analysis: FileAnalysis) -> dict | None:
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
            return mapping
        calls = [call]
        if owner.value.kind is Kind.PROCESS:
            # Queues, pipes and locks a Process receives must come from the same context.
            shared = self._synchronisation_objects(analysis)
            if shared is None:
                return None
            calls.extend(shared)
        for made in calls:
            site = analysis.site(made)
            attribute = _made_attribute(analysis, made, site)
            module_name = _module_of(analysis, made.func, site, attribute)
            if module_name is None:
                return None
            if module_name.startswith("@"):  # `from multiprocessing import Pool`: import the module
                module_name = add_import(analysis, module_name[1:], mapping)
                if module_name is None:
                    return None
            mapping[made.func] = cst.Attribute(spawn_context(module_name), cst.Name(attribute))
        return mapping

    def _synchronisation_objects(self, analysis: FileAnalysis) -> list[cst.Call] | None:
        """`mp.Queue()`-like calls whose results the process receives through `args=`."""
        found = []
        for crossing in analysis.crossings:
            if crossing.call is not self.owner.construction:
                continue
            for sent in crossing.sent:
                if not isinstance(sent.node, cst.Name):
                    continue
                bindings = analysis.symbols.bindings_at(sent.node.value, sent.scope, crossing.site.order)
                if len(bindings) != 1 or not isinstance(bindings[0].value, cst.Call):
                    continue
                made = bindings[0].value
                site = analysis.site(made)
                name = analysis.classifier.qualified_name(made.func, site.scope, site.order) if site else None
                if name and name.startswith("multiprocessing.") and name.rsplit(".", 1)[1] in SYNCHRONISATION:
                    if analysis.classifier.classify(made, site.scope, site.order).method:
                        return None  # made from an explicit context already: manual edit required
                    found.append(made)
        return found


SYNCHRONISATION = frozenset(
    "Queue SimpleQueue JoinableQueue Pipe Event Lock RLock Semaphore BoundedSemaphore Condition Barrier "
    "Value Array Manager".split()
)


def _made_attribute(analysis: FileAnalysis, call: cst.Call, site) -> str:
    """`mp.Pool(...)` -> "Pool"; `P(...)` with `from multiprocessing import Pool as P` -> "Pool"."""
    if isinstance(call.func, cst.Attribute):
        return call.func.attr.value
    name = analysis.classifier.qualified_name(call.func, site.scope, site.order) or ""
    return name.rsplit(".", 1)[-1]


def _module_of(analysis: FileAnalysis, func: cst.BaseExpression, site, attribute: str) -> str | None:
    """`mp.Pool` -> "mp"; `Pool` imported from multiprocessing -> "@multiprocessing"; else None."""
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.attr.value == attribute:
        bindings = analysis.symbols.bindings_at(func.value.value, site.scope, site.order)
        if len(bindings) == 1 and bindings[0].kind == "import" and bindings[0].qualified in _MODULES:
            return func.value.value
        return None
    if isinstance(func, cst.Name):
        bindings = analysis.symbols.bindings_at(func.value, site.scope, site.order)
        if len(bindings) == 1 and bindings[0].kind == "import" and bindings[0].qualified:
            module, _, name = bindings[0].qualified.rpartition(".")
            module = {"multiprocessing.pool": "multiprocessing", "multiprocessing.context": "multiprocessing",
                      "multiprocessing.queues": "multiprocessing"}.get(module, module)
            if module in _MODULES and "." not in module and name == attribute:
                return "@" + module
    return None
