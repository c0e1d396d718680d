"""Calls across modules after the runtime started, seen from both ends.

From the calling module (`calls_after_start`): the calls it makes into a given project module where
its execution walk says TensorFlow's runtime may have started, each with that start (a
`CallerStart`), its own callers' starts included (a chain of calls through modules, to
`Project`'s `MAX_CALLER_DEPTH`). tfproc_lint/project.py asks it of the files that import a module
(`Project.callers`), and the module's own analysis reads them through `ProjectNames.callers`.

From the called module (`caller_entries`): those calls, matched to the functions they run (a
function, a class's constructor, a method called as `Class.method` or on an object the calling
module made from the class, also one held in `self.attr`, as `project_calls.project_class_of`
types it), as the states the execution walk starts them from (`FileAnalysis.caller_walk`): a pool
that such a function forks forks a parent whose runtime runs, though nothing in its own file
started it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from tfproc_lint.analysis.execution import RuntimeStart
from tfproc_lint.analysis.project_calls import project_class_of
from tfproc_lint.analysis.project_names import CallerStart, Effect, Place

if TYPE_CHECKING:
    from tfproc_lint.analysis.module_facts import ModuleFacts
    from tfproc_lint.analysis.symbols import FunctionInfo


def calls_after_start(analysis: "ModuleFacts") -> dict[str, tuple[CallerStart, ...]]:
    """The calls `analysis`'s module makes into other project modules (re-exports followed) where
    the runtime may have started before them, by module, in the file's order, the first per function."""
    project = analysis.project
    if project is None:
        return {}
    walk = analysis.caller_walk or analysis.execution  # its own callers' starts count too
    found: dict[tuple[str, str], CallerStart] = {}
    for site, name in analysis.calls.resolved():
        started = walk.started_before(site.node)
        if started is None:
            continue
        func = site.node.func
        if isinstance(func, cst.Attribute):  # a method called on an object of a project module's class
            made = analysis._imported_instance(func.value, site.scope, site.order)
            klass = made[1] if made is not None else project_class_of(analysis, func.value, site.scope, site.order)
            if klass is not None:  # `self.attr.run()`: the constructor assigned `self.attr = Class(...)`
                name = f"{klass}.{func.attr.value}"
        located = project.locate(name) if name else None
        if located is None or not located[1] or located in found:
            continue
        method = analysis.file_start_method
        if started.caller is not None:  # started in a module that calls this one: that start
            start = started.caller.start
            method = method or started.caller.start_method
        else:
            start = Effect(started.reason, _place(analysis, started.call))
        found[located] = CallerStart(located[1], _place(analysis, site.node), start, method)
    by_module: dict[str, tuple[CallerStart, ...]] = {}
    for (module, _), caller in found.items():
        by_module[module] = (*by_module.get(module, ()), caller)
    return by_module


def caller_entries(analysis: "ModuleFacts") -> dict["FunctionInfo", RuntimeStart]:
    """The functions of `analysis`'s module that other project modules call after their runtime may
    have started, each with the state it starts in: a `RuntimeStart` at the function's name that
    carries the caller's `CallerStart`."""
    project = analysis.project
    if project is None:
        return {}
    callers = project.callers()
    if not callers:
        return {}
    named = module_functions(analysis)
    entries: dict[FunctionInfo, RuntimeStart] = {}
    for caller in callers:
        info = named.get(caller.function) or named.get(f"{caller.function}.__init__")
        if info is not None and info not in entries:
            entries[info] = RuntimeStart(info.node.name, f"{caller.start.reason} ({caller.start.place})", caller)
    return entries


def module_functions(analysis: "ModuleFacts") -> dict[str, "FunctionInfo"]:
    """The module's top-level functions and its top-level classes' methods, by the names other
    modules call them by ("run_pool", "Scorer.__init__"), as its summary names them."""
    module_scope = analysis.symbols.module_scope
    named = {info.node.name.value: info for info in analysis.symbols.functions.values()
             if info.scope.parent is module_scope}
    for klass in analysis.symbols.classes.values():
        if klass.scope.parent is module_scope:
            named.update({f"{klass.node.name.value}.{info.node.name.value}": info
                          for info in analysis.symbols.functions.values() if info.class_info is klass})
    return named


def _place(analysis: "ModuleFacts", node: cst.CSTNode) -> Place:
    span = analysis.position(node)
    return Place(str(analysis.path), span.start.line, span.start.column, span.end.line, span.end.column)
