"""TFP203 fix: ask for a context object instead of setting the global start method.

    def run(seeds):                                    def run(seeds):
        mp.set_start_method("spawn")          ->           ctx = mp.get_context("spawn")
        with mp.Pool(2) as pool:                           with ctx.Pool(2) as pool:
            return pool.map(f, seeds)                          return pool.map(f, seeds)

Offered when the call is a statement of a function and every process object the file makes with
the default context (pools, processes, queues, locks, managers, executors) is made in that function
after it, and nothing it calls in this file makes one: then the method applied to them alone, and
still does.
"""

from __future__ import annotations

import libcst as cst

from tfproc_lint.analysis.file_analysis import FileAnalysis
from tfproc_lint.analysis.start_methods import SetStartMethod, fixes_default_context
from tfproc_lint.analysis.values import keyword
from tfproc_lint.analysis.walk import calls_in, iter_tree, read_names
from tfproc_lint.diagnostics import Applicability
from tfproc_lint.fixes.base import FixBuilder, Plan, Refusal
from tfproc_lint.fixes.common import add_import, add_keyword, module_import_name
from tfproc_lint.knowledge import processes

_CONTEXT_FACTORIES = {name.rsplit(".", 1)[1] for name in processes.CONTEXT_FIXING_CALLS} - {"set_start_method"}
_CONTEXT_FACTORIES |= {"Process"}


class UseContextObject(FixBuilder):
    applicability = Applicability.SAFE

    def __init__(self, call: SetStartMethod, set_on_import=None) -> None:
        self.call = call
        self.set_on_import = set_on_import  # the place in another module that sets the method at import
        self.title = f'use multiprocessing.get_context("{call.method}") instead of {call.spelled}'

    def plan(self, analysis: FileAnalysis) -> Plan | Refusal:
        call = self.call.call
        if self.set_on_import is not None:
            return self.refuse(f"{self.set_on_import} sets the start method when it is imported, and every spawned "
                               "child imports it again and raises: remove the call there")
        if self.call.method not in ("spawn", "fork", "forkserver"):
            return self.refuse("the start method is not a literal")
        function = analysis.enclosing_function_node(call)
        statement = analysis.ancestors(call)[1] if len(analysis.ancestors(call)) > 1 else None
        if function is None:
            return self.refuse("the call is not in a function: set the method once, before anything uses "
                               "multiprocessing")
        if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
                and isinstance(statement.body[0], cst.Expr) and statement.body[0].value is call):
            return self.refuse("the call is not a statement of its own")
        if any(isinstance(node, (cst.FunctionDef, cst.Lambda)) and node is not function
               for node in iter_tree(function.body)):
            return self.refuse("the function defines functions that may start processes")
        order = analysis.symbols.order_of_node[call]
        made_here, elsewhere = [], []
        for made in _default_context_objects(analysis):
            if made in _queries(analysis):
                return self.refuse(f"line {analysis.line_of(made)} asks for the global start method")
            inside = analysis.enclosing_function_node(made) is function
            (made_here if inside and analysis.symbols.order_of_node.get(made, 0) > order else elsewhere).append(made)
        if elsewhere:
            return self.refuse(f"line {analysis.line_of(elsewhere[0])} also makes processes or queues with the "
                               "global start method")
        if any(_makes_processes(analysis, callee) for callee in _callees(analysis, function)):
            return self.refuse("a function it calls makes processes with the global start method")
        mapping: dict = {}
        module = self._module_name(analysis, mapping)
        if module is None:
            return self.refuse("multiprocessing is not imported as a module name this fix can use")
        name = _free_name(analysis, function, "ctx")
        replacement = cst.parse_statement(f'{name} = {module}.get_context("{self.call.method}")\n')
        mapping[statement] = replacement.with_changes(leading_lines=statement.leading_lines,
                                                      trailing_whitespace=statement.trailing_whitespace)
        for made in made_here:
            site = analysis.site(made)
            qualified = analysis.classifier.qualified_name(made.func, site.scope, site.order) or ""
            if qualified == "concurrent.futures.ProcessPoolExecutor":
                mapping[made] = lambda updated, ctx=name: add_keyword(updated, "mp_context", cst.Name(ctx))
            else:
                attribute = qualified.rsplit(".", 1)[1]
                mapping[made.func] = cst.Attribute(cst.Name(name), cst.Name(attribute))
        return mapping

    def _module_name(self, analysis: FileAnalysis, mapping: dict) -> str | None:
        func = self.call.call.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            bindings = analysis.symbols.bindings_at(func.value.value, self.call.site.scope, self.call.site.order)
            if len(bindings) == 1 and bindings[0].kind == "import":
                return func.value.value
        return module_import_name(analysis, "multiprocessing") or add_import(analysis, "multiprocessing", mapping)


def _default_context_objects(analysis: FileAnalysis) -> list[cst.Call]:
    """Calls that make a process object with the default context: the factories, a default
    `Process` (it starts with the global method), a `ProcessPoolExecutor` without `mp_context`."""
    found = []
    for site, name in analysis.calls.resolved():
        name = name or ""
        if name.startswith("multiprocessing.") and name.rsplit(".", 1)[1] in _CONTEXT_FACTORIES:
            found.append(site.node)
        elif name == "concurrent.futures.ProcessPoolExecutor" and keyword(site.node, "mp_context") is None:
            found.append(site.node)
        elif name in (processes.GET_CONTEXT, processes.GET_START_METHOD) and fixes_default_context(analysis, site.node):
            found.append(site.node)
    return found


def _queries(analysis: FileAnalysis) -> set[cst.Call]:
    asking = (processes.GET_CONTEXT, processes.GET_START_METHOD)
    return {site.node for site in analysis.calls.named(asking)}


def _callees(analysis: FileAnalysis, function: cst.FunctionDef):
    for call in calls_in(function.body):
        site = analysis.site(call)
        callee = analysis.callee(call, site) if site is not None else None
        if callee is not None:
            yield callee


def _makes_processes(analysis: FileAnalysis, info) -> bool:
    made = set(_default_context_objects(analysis))
    return any(call in made for call in calls_in(info.node.body))


def _free_name(analysis: FileAnalysis, function: cst.FunctionDef, wanted: str) -> str:
    taken = {n.value for n in read_names(function)} | set(analysis.symbols.functions[function].scope.bindings)
    taken |= set(analysis.symbols.module_scope.bindings)
    name, number = wanted, 2
    while name in taken:
        name, number = f"{wanted}_{number}", number + 1
    return name
