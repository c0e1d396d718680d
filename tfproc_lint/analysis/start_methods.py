"""Where a program sets multiprocessing's global start method, and what fixes it first (TFP202, TFP203).

The default context's start method is fixed by the first `set_start_method()`, and also by the first
object made from the default context (a `Pool`, `Queue`, `Lock`, a started `Process`, a
`ProcessPoolExecutor` without `mp_context`, `get_context()` or `get_start_method()`); a later
`set_start_method()` without `force=True` raises `RuntimeError: context has already been set`.
A spawned or forkserver child starts with the method already set, before it re-imports the main
module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from tfproc_lint.analysis.answers import per_file
from tfproc_lint.analysis.kinds import Kind
from tfproc_lint.analysis.project_names import SettingKind
from tfproc_lint.analysis.symbols import CallSite
from tfproc_lint.analysis.values import argument, keyword, literal_start_method
from tfproc_lint.knowledge import processes
from tfproc_lint.records import record

if TYPE_CHECKING:
    from tfproc_lint.analysis.module_facts import ModuleFacts

# Exceptions whose handler catches "context has already been set".
_CATCHING = frozenset({"RuntimeError", "Exception", "BaseException"})


@record
class SetStartMethod:
    call: cst.Call
    site: CallSite
    method: str  # "spawn", "fork", "forkserver", "default" (None) or "unknown"
    forced: bool  # force=True, or a force= the analysis cannot read (prefer a miss)

    @property
    def spelled(self) -> str:
        return f'set_start_method("{self.method}")' if self.method not in ("unknown", "default") \
            else "set_start_method(...)"


@per_file
def set_start_method_calls(analysis: "ModuleFacts") -> list[SetStartMethod]:
    found = []
    for site in analysis.calls.named(processes.SET_START_METHOD):
        force = argument(site.node, 1, "force")
        forced = force is not None and not (isinstance(force, cst.Name) and force.value in ("False", "None"))
        found.append(SetStartMethod(site.node, site, literal_start_method(site.node), forced))
    return found


def fixes_default_context(analysis: "ModuleFacts", call: cst.Call, graph: bool = False) -> str | None:
    """Why `call` fixes the default context's start method, or None (a detector for ExecutionWalk)."""
    site = analysis.site(call)
    if site is None:
        return None
    classifier = analysis.classifier
    name = classifier.qualified_name(call.func, site.scope, site.order)
    if name == processes.SET_START_METHOD:
        return f"{analysis.code(call, 50)} set it"
    own = analysis.callee(call, site) is not None  # a function of this file: the walk follows it
    facts = analysis.project.function(name) if analysis.project is not None and name and not own else None
    made = next((s for s in facts.settings if s.kind is SettingKind.START_METHOD), None) if facts else None
    if made is not None:  # a function of another module that sets it
        return f"calls {name}(), which set it with {made.spelled} ({made.place})"
    if name == processes.GET_CONTEXT:
        return "get_context() without a method fixed it" if literal_start_method(call) == "default" else None
    if name == processes.GET_START_METHOD:
        allow_none = argument(call, 0, "allow_none")
        if allow_none is None or (isinstance(allow_none, cst.Name) and allow_none.value == "False"):
            return "get_start_method() without allow_none=True fixed it"
        return None
    if name in processes.CONTEXT_FIXING_CALLS:
        if keyword(call, "context") is not None:
            return None  # multiprocessing.pool.Pool(context=ctx)
        return f"{analysis.code(call.func, 40)}() used the default context"
    value = classifier.classify(call, site.scope, site.order)
    if value.kind is Kind.EXECUTOR and value.origin is call and value.method is None:
        return "a ProcessPoolExecutor without mp_context used the default context"
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value == "start" and not call.args:
        process = classifier.classify(func.value, site.scope, site.order)
        if process.kind is Kind.PROCESS and process.method is None and process.detail != "os.fork":
            return "a Process started from the default context"
    return None


def catches_runtime_error(analysis: "ModuleFacts", node: cst.CSTNode) -> bool:
    """`node` sits in a `try:` (of its own function) whose handler catches a RuntimeError: for
    `set_start_method`, the usual "set it if not set yet" idiom."""
    child = node
    for parent in analysis.ancestors(node):
        if isinstance(parent, (cst.Try, cst.TryStar)) and child is parent.body:
            if any(_catches_runtime_error(analysis, handler) for handler in parent.handlers):
                return True
        if isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return False
        child = parent
    return False


def _catches_runtime_error(analysis: "ModuleFacts", handler: cst.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    types = handler.type.elements if isinstance(handler.type, cst.Tuple) else [handler.type]
    for element in types:
        node = element.value if isinstance(element, cst.Element) else element
        name = node.value if isinstance(node, cst.Name) else node.attr.value if isinstance(node, cst.Attribute) else ""
        if name in _CATCHING:
            return True
    return False


def is_library_module(analysis: "ModuleFacts") -> bool:
    """A module meant to be imported, judged conservatively: a package's `__init__.py`, or a module
    with relative imports, and no `if __name__ == "__main__":` block."""
    if analysis.symbols.main_guard_orders or analysis.notebook:
        return False
    if analysis.path.replace("\\", "/").rsplit("/", 1)[-1] == "__init__.py":
        return True
    return any(isinstance(small, cst.ImportFrom) and small.relative
               for statement in analysis.module.body if isinstance(statement, cst.SimpleStatementLine)
               for small in statement.body)
