"""TFP201 fix: start the workers from `multiprocessing.get_context("spawn")`."""

from __future__ import annotations

import libcst as cst

from tfproc_lint.analysis.file_analysis import FileAnalysis
from tfproc_lint.analysis.kinds import STATE_NOUNS, Kind
from tfproc_lint.analysis.routes import Pickling
from tfproc_lint.analysis.values import enclosing_function, keyword
from tfproc_lint.analysis.walk import calls_in, read_names
from tfproc_lint.analysis.workers import Owner, WorkerKind
from tfproc_lint.diagnostics import Applicability
from tfproc_lint.fixes.common import (
    add_import, add_keyword, imported_worker, quoted_names, runs_only_in_the_parent, spawn_context,
)
from tfproc_lint.fixes.base import FixBuilder, Plan, Refusal
from tfproc_lint.knowledge.packages import MULTIPROCESSING_PACKAGES

_MODULES = MULTIPROCESSING_PACKAGES


class UseSpawnContext(FixBuilder):
    title = 'start the workers from multiprocessing.get_context("spawn")'
    applicability = Applicability.UNSAFE

    def __init__(self, owner: Owner) -> None:
        self.owner = owner

    def plan(self, analysis: FileAnalysis) -> Plan | Refusal:
        owner, call = self.owner, self.owner.construction
        if owner.value.detail in ("os.fork", "keras workers") or owner.value.kind is Kind.PARALLEL:
            return self.refuse()
        if owner.value.method is not None:
            return self.refuse(f"the code asks for the \"{owner.value.method}\" start method explicitly")
        if owner.value.info is not None:
            return self.refuse("a subclass decides how its processes start")
        in_notebook = analysis.workers_defined_in_notebook(owner)
        if in_notebook:  # a notebook's cells are never re-imported; its functions cannot be imported
            return self.refuse(f"spawned workers cannot import {quoted_names(in_notebook)}, defined in the notebook "
                               "(TFP204)")
        if not analysis.notebook and not runs_only_in_the_parent(analysis, call):
            return self.refuse("spawned workers re-import the main module, which starts processes at import: "
                               "move the start under `if __name__ == \"__main__\":` first")
        imported = imported_worker(analysis, owner.workers)
        if imported:
            return self.refuse(imported)
        if not all(worker.kind is WorkerKind.FUNCTION and worker.function is not None
                   and worker.function.scope.parent.kind in ("module", "class") for worker in owner.workers):
            return self.refuse("spawn pickles the worker, and only module-level functions pickle")
        for crossing in owner.crossings:  # fork passes these by inheritance; spawn must pickle them
            if crossing.pickled is Pickling.UNLESS_FORK:
                for node, value in analysis.sent_state(crossing):
                    if value.kind is not Kind.KERAS_MODEL:
                        return self.refuse(f"spawn would pickle `{analysis.code(node, 30)}`, a "
                                           f"{STATE_NOUNS[value.kind]}, which cannot be pickled")
        late = globals_set_after_import(analysis, owner)
        if late:
            name, where = late
            return self.refuse(f"the workers read `{name}`, which the parent sets in {where}; spawned workers "
                               "re-import the module and would see its import-time value")
        mapping: dict = {}
        if owner.value.kind is Kind.EXECUTOR:
            if keyword(call, "mp_context") is not None:
                return self.refuse()
            name = add_import(analysis, "multiprocessing", mapping)
            if name is None:
                return self.refuse()
            mapping[call] = lambda updated: add_keyword(updated, "mp_context", spawn_context(name))
            return mapping
        calls = [call]
        if owner.value.kind is Kind.PROCESS:
            # Queues, pipes and locks a Process receives must come from the same context.
            shared = self._synchronisation_objects(analysis)
            if shared is None:
                return self.refuse()
            calls.extend(shared)
        for made in calls:
            site = analysis.site(made)
            attribute = _made_attribute(analysis, made, site)
            module_name = _module_of(analysis, made.func, site, attribute)
            if module_name is None:
                return self.refuse()
            if module_name.startswith("@"):  # `from multiprocessing import Pool`: import the module
                module_name = add_import(analysis, module_name[1:], mapping)
                if module_name is None:
                    return self.refuse()
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
                name = analysis.name_of(made.func)
                if name and name.startswith("multiprocessing.") and name.rsplit(".", 1)[1] in SYNCHRONISATION:
                    if analysis.kind_of(made).method:
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


def globals_set_after_import(analysis: FileAnalysis, owner: Owner) -> tuple[str, str] | None:
    """A module global the workers (or the functions they call) read that only gets a value after
    import: in a function through `global`, or in the `__main__` block. A spawned worker
    re-imports the module and sees the import-time value (usually None)."""
    symbols = analysis.symbols
    functions = [w.function for w in owner.workers if w.function is not None]
    in_workers = {info.scope for info in functions}  # the initializer's `global x` is the worker's own
    seen: set = set()
    while functions:
        info = functions.pop()
        if info.node in seen or len(seen) > 20:
            continue
        seen.add(info.node)
        for name in {n.value for n in read_names(info.node.body)}:
            if symbols.resolving_scope(name, info.scope) is not symbols.module_scope:
                continue
            bindings = symbols.module_scope.bindings.get(name, [])
            late = [b for b in bindings if b.kind == "assign" and b.scope not in in_workers and (
                b.scope is not symbols.module_scope or symbols.in_main_guard(b))]
            at_import = [b for b in bindings if b not in late and b.kind != "assign"
                         or (b not in late and not _is_none(b.value))]
            if late and not at_import:
                where = f"{enclosing_function(late[0].scope).node.name.value}()" \
                    if late[0].scope is not symbols.module_scope else "the __main__ block"
                return name, where
        for call in calls_in(info.node.body):
            site = analysis.site(call)
            callee = analysis.callee(call, site) if site is not None else None
            if callee is not None:
                functions.append(callee)
    return None


def _is_none(node) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"
