"""The parent's statements in execution order: where TensorFlow's runtime may have started.

The walk follows the module's statements (the `__main__` block included) and, through calls,
functions, methods and constructors of the same file, up to a depth. It follows control flow:
a branch that ends in `return`, `raise`, `sys.exit()` / `os._exit()`, `break` or `continue` does
not flow into the statements after it. The state is "the runtime may have started", so where paths
meet (after an `if`, a loop, a call) it is the union over them. Each function is also walked as an
entry point from the state the module's import leaves (console scripts, `absl.app.run(main)`), unless
the module's own flow calls it; a class's `__init__` first, with the methods it calls on its instance
after it (they need the instance, so they are no entry points of their own).

The result: for every call and assignment the walk reached, the first runtime start that may
precede it, or None. Rules look up the calls they care about (fork points, configuration).
The same walk answers other "has X happened yet?" questions when given another `detect`
(`FileAnalysis.context_walk`: has the default start method been fixed?).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from tfproc_lint.analysis import engines

from tfproc_lint.analysis.project_calls import constructor, process_base
from tfproc_lint.analysis.symbols import FunctionInfo
from tfproc_lint.analysis.walk import calls_in_evaluation_order, is_main_guard, iter_tree
from tfproc_lint.knowledge import processes
from tfproc_lint.records import record

if TYPE_CHECKING:
    from tfproc_lint.analysis.module_facts import ModuleFacts
    from tfproc_lint.analysis.project_names import CallerStart
    from tfproc_lint.analysis.tf_usage import TensorFlowUsage

MAX_CALL_DEPTH = 4
# Methods that run on an object its constructor did not make in this process.
WITHOUT_CONSTRUCTOR = frozenset({"__new__", "__setstate__", "__init_subclass__", "__class_getitem__"})


@record
class RuntimeStart:
    call: cst.Call  # or, for a start in a calling module, the called function's name
    reason: str
    # Started in another project module, which then calls the function walked from this state
    caller: CallerStart | None = None


class _Unreachable:
    """The state after a statement that never completes normally."""

    def __repr__(self) -> str:
        return "UNREACHABLE"


UNREACHABLE = _Unreachable()
State = "RuntimeStart | None | _Unreachable"


def join(*states):
    """Where paths meet: reachable if any path is; started if any reachable path started."""
    reachable = [s for s in states if s is not UNREACHABLE]
    if not reachable:
        return UNREACHABLE
    return next((s for s in reachable if s is not None), None)


@dataclass
class _Frame:
    """Where abrupt exits go: a function's returns, a loop's breaks and continues, a try's raises."""

    returns: list = field(default_factory=list)
    breaks: list = field(default_factory=list)
    continues: list = field(default_factory=list)
    raises: list = field(default_factory=list)
    end: object = None  # a loop body's state at its end


class ExecutionWalk:
    def __init__(self, analysis: "ModuleFacts", usage: "TensorFlowUsage", detect=None, detect_import=None,
                 imports_only: bool = False, entries: "Mapping[FunctionInfo, RuntimeStart] | None" = None) -> None:
        """`detect(call, graph_building)`: why this call starts what the walk tracks, or None
        (default: TensorFlow's runtime, `usage.initialises_runtime`; only then are a pool's tasks
        walked from the state its initializer leaves in the worker). `entries`: functions that other
        modules call where the runtime may have started, walked once more from that state."""
        self.analysis = analysis
        self.follows_initializers = detect is None
        self.usage = usage
        self.detect = detect or self.usage.initialises_runtime
        # `detect_import(statement)`: why an import statement (its project modules' top-level code)
        # does what the walk tracks, or None.
        self.detect_import = detect_import or (self.usage.import_starts_runtime if detect is None else None)
        self.classifier = analysis.classifier
        self.state_at: dict[cst.CSTNode, RuntimeStart | None] = {}
        self.reached_unstarted: set[cst.CSTNode] = set()  # reached on a path where nothing started yet
        self.after_import: RuntimeStart | None = None  # the state a spawned child starts its work in
        self.on_import: set[cst.CSTNode] = set()
        self._importing = False
        self._summaries: dict[tuple, object] = {}
        self._active: set[cst.FunctionDef] = set()
        self._functions: list[_Frame] = []
        self._loops: list[_Frame] = []
        self._tries: list[_Frame] = []
        self.imports_only = imports_only  # walk only what importing the module runs (a summary's)
        self._entries = entries or {}
        self._run()

    def started_before(self, node: cst.CSTNode) -> RuntimeStart | None:
        return self.state_at.get(node)

    def state_at_start(self, statement: cst.CSTNode) -> tuple[bool, RuntimeStart | None]:
        """(known, state) where `statement` (or a block) starts: at its first call, else at the first
        assignment the walk recorded in it."""
        calls = calls_in_evaluation_order(statement)
        first = calls[0] if calls else next((n for n in iter_tree(statement, enter_scopes=False)
                                             if n in self.state_at), None)
        if first is None or first not in self.state_at:
            return False, None
        return True, self.state_at[first]

    def only_after_an_exception(self, node: cst.CSTNode) -> bool:
        """`node` is in an `except` handler of a `try` that starts with nothing started: the walk
        lets a handler run after any part of the try body, which can start the runtime only
        because the exception may come late (a `ValueError` fallback after a device listing)."""
        for parent in self.analysis.ancestors(node):
            if isinstance(parent, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                return False
            if isinstance(parent, (cst.Try, cst.TryStar)) and not any(node is n for n in iter_tree(parent.body)):
                known, state = self.state_at_start(parent.body)
                if known and state is None and not any(node is n for n in _else_and_finally(parent)):
                    return True
        return False

    def also_reached_before_start(self, node: cst.CSTNode) -> bool:
        """Some path reaches `node` before anything started (a function called before and after)."""
        return node in self.reached_unstarted

    # entry points ----------------------------------------------------------------------------------
    def _run(self) -> None:
        module = self.analysis.module
        importing = [s for s in module.body if not is_main_guard(s)]
        self._importing = True  # what runs on import also runs in every spawned child
        on_import = self._with_function_frame(lambda: self.block(importing, None, False, 0))
        self._importing = False
        if on_import is UNREACHABLE:
            return
        self.after_import = on_import
        if self.imports_only:
            return  # functions are walked when asked (`function`), from the state given
        guards = [s for s in module.body if is_main_guard(s)]
        self._with_function_frame(lambda: self.block(guards, on_import, False, 0))
        if self.follows_initializers:
            # A pool's worker runs its initializer, then its tasks: what the initializer started
            # precedes every task (a setting in a task comes too late).
            for initializer, tasks in self.analysis.initialized_tasks():
                after = self.function(initializer, on_import, False, depth=1)
                if isinstance(after, RuntimeStart):
                    for task in tasks:
                        self.function(task, after, False, depth=1)
        # Functions the module's own flow never reaches may be entry points of their own; those
        # that run in an engine's worker processes start there with nothing started.
        reached = {key[0] for key in self._summaries}
        fresh = engines.fresh_process_functions(self.analysis)
        functions = self.analysis.symbols.functions
        # A class's constructor goes first: the methods it calls on its instance run after what it
        # ran before them (a class made in another module), and not as entry points of their own.
        for info in functions.values():
            if info.node.name.value == "__init__" and info.self_name and info.node not in reached:
                self.function(info, None if info in fresh else on_import, False, depth=1)
                reached |= {key[0] for key in self._summaries if _instance_method(functions.get(key[0]), info)}
        for info in functions.values():
            if info.node not in reached:
                start = None if info in fresh else (on_import or self._constructed(info, on_import))
                self.function(info, start, False, depth=1)
        for info, started in self._entries.items():
            self.function(info, started, False, depth=1)

    def _constructed(self, method: FunctionInfo, on_import) -> RuntimeStart | None:
        """What the object's constructor may have started before one of its methods runs: every
        method of an instance runs after its constructor (`self.model = Model()`, then `train()`
        forks). Not for a `Process` subclass, whose `run` may start in a fresh interpreter, nor for
        methods that run on objects no constructor made (`__new__`, `__setstate__`)."""
        klass = method.class_info
        if method.self_name is None or klass is None or method.node.name.value in WITHOUT_CONSTRUCTOR:
            return None
        made = constructor(self.analysis, klass)
        if made is None or made is method or process_base(self.analysis, klass) is not None:
            return None
        after = self.function(made, on_import, False, depth=1)
        return after if isinstance(after, RuntimeStart) else None

    def runs_on_import(self, node: cst.CSTNode) -> bool:
        """The call runs when the module is imported (outside the `__main__` block), directly
        or through functions called at import."""
        return node in self.on_import

    def _with_function_frame(self, walk):
        self._functions.append(_Frame())
        try:
            end = walk()
        finally:
            frame = self._functions.pop()
        return join(end, *frame.returns)

    # statements ------------------------------------------------------------------------------------
    def block(self, statements, state, graph, depth):
        for statement in statements:
            if state is UNREACHABLE:
                return UNREACHABLE
            state = self.statement(statement, state, graph, depth)
        return state

    def suite(self, node, state, graph, depth):
        body = getattr(node, "body", None)
        if isinstance(body, cst.BaseSuite):
            body = body.body
        if isinstance(body, (list, tuple)):
            return self.block(body, state, graph, depth)
        return state

    def statement(self, node, state, graph, depth):
        if isinstance(node, cst.FunctionDef):
            for decorator in node.decorators:
                state = self.expression(decorator.decorator, state, graph, depth)
            return state
        if isinstance(node, cst.ClassDef):
            body = [s for s in node.body.body if not isinstance(s, cst.FunctionDef)]
            return self.block(body, state, graph, depth)  # a class body runs where it stands
        if isinstance(node, cst.SimpleStatementLine):
            for small in node.body:
                state = self.small_statement(small, state, graph, depth)
                if state is UNREACHABLE:
                    return UNREACHABLE
            return state
        if isinstance(node, cst.If):
            return self.if_statement(node, state, graph, depth)
        if isinstance(node, cst.With):
            building = graph
            for item in node.items:
                state = self.expression(item.item, state, graph, depth)
                site = self.analysis.site(item.item) if isinstance(item.item, cst.Call) else None
                if site is not None and self.usage.is_graph_context(item.item, site.scope, site.order):
                    building = True
            if state is UNREACHABLE:
                return state
            return self.suite(node, state, building, depth)
        if isinstance(node, (cst.For, cst.While)):
            return self.loop(node, state, graph, depth)
        if isinstance(node, (cst.Try, cst.TryStar)):
            return self.try_statement(node, state, graph, depth)
        if isinstance(node, cst.Match):
            state = self.expression(node.subject, state, graph, depth)
            ends = [self.suite(case, state, graph, depth) for case in node.cases]
            return join(state, *ends)
        return self.suite(node, state, graph, depth)

    def small_statement(self, node, state, graph, depth):
        if state is None and self.detect_import is not None and isinstance(node, (cst.Import, cst.ImportFrom)):
            reason = self.detect_import(node)  # a project module's top-level code
            if reason is not None:
                self._record(node, state)
                return RuntimeStart(node, reason)
        state = self.expression(node, state, graph, depth)
        if state is UNREACHABLE:
            return state
        if isinstance(node, cst.Return):
            self._functions[-1].returns.append(state)
            return UNREACHABLE
        if isinstance(node, cst.Raise):
            if self._tries:
                self._tries[-1].raises.append(state)
            return UNREACHABLE
        if isinstance(node, cst.Break) and self._loops:
            self._loops[-1].breaks.append(state)
            return UNREACHABLE
        if isinstance(node, cst.Continue) and self._loops:
            self._loops[-1].continues.append(state)
            return UNREACHABLE
        if isinstance(node, cst.Expr) and isinstance(node.value, cst.Call) and self.exits_process(node.value):
            return UNREACHABLE
        if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
            self._record(node, state)
        return state

    def if_statement(self, node: cst.If, state, graph, depth):
        state = self.expression(node.test, state, graph, depth)
        if state is UNREACHABLE:
            return state
        then = UNREACHABLE if self._never_true(node.test) else self.suite(node, state, graph, depth)
        if node.orelse is None:
            otherwise = state
        elif isinstance(node.orelse, cst.If):
            otherwise = self.if_statement(node.orelse, state, graph, depth)
        else:
            otherwise = self.suite(node.orelse, state, graph, depth)
        return join(then, otherwise)

    def _never_true(self, test: cst.BaseExpression) -> bool:
        """`if False:`, or `if CHECK_DEVICES:` where the module binds `CHECK_DEVICES = False` once and
        nowhere else (a flag that is off): the branch never runs."""
        if _is_false(test):
            return True
        if not isinstance(test, cst.Name):
            return False
        symbols = self.analysis.symbols
        bindings = symbols.module_scope.bindings.get(test.value, ())
        if len(bindings) != 1 or bindings[0].kind != "assign" or not _is_false(bindings[0].value):
            return False
        for parent in self.analysis.ancestors(test):  # a local of the same name hides it
            scope = symbols.scope_of_node.get(parent)
            if scope is not None and scope.kind != "module" and test.value in scope.bindings:
                return False
        return True

    def loop(self, node, state, graph, depth):
        head = node.iter if isinstance(node, cst.For) else node.test
        state = self.expression(head, state, graph, depth)
        if state is UNREACHABLE:
            return state
        frame = self._loop_body(node, state, graph, depth)
        again = join(state, frame.end, *frame.continues)
        if state is None and again not in (None, UNREACHABLE):
            # The next iteration starts where this one ended (or continued): walk it once more.
            frame = self._loop_body(node, again, graph, depth, frame)
        forever = isinstance(node, cst.While) and _is_true(node.test)
        exhausted = UNREACHABLE if forever else join(state, frame.end, *frame.continues)
        if node.orelse is not None and exhausted is not UNREACHABLE:
            exhausted = self.suite(node.orelse, exhausted, graph, depth)
        return join(exhausted, *frame.breaks)

    def _loop_body(self, node, state, graph, depth, previous: "_Frame | None" = None) -> "_Frame":
        frame = _Frame()
        if previous is not None:
            frame.breaks, frame.continues = list(previous.breaks), list(previous.continues)
        self._loops.append(frame)
        try:
            frame.end = self.suite(node, state, graph, depth)
        finally:
            self._loops.pop()
        return frame

    def try_statement(self, node, state, graph, depth):
        frame = _Frame()
        self._tries.append(frame)
        try:
            end = self.suite(node, state, graph, depth)
        finally:
            self._tries.pop()
        # A handler may run after any part of the body: from the start, the end or a raise.
        handler_entry = join(state, end, *frame.raises)
        ends = [self.suite(handler, handler_entry, graph, depth) for handler in node.handlers]
        if node.orelse is not None and end is not UNREACHABLE:
            end = self.suite(node.orelse, end, graph, depth)
        after = join(end, *ends)
        if node.finalbody is not None:
            final_entry = join(after, handler_entry)
            final_end = self.suite(node.finalbody, final_entry, graph, depth)
            return UNREACHABLE if final_end is UNREACHABLE else (after if after is UNREACHABLE else final_end)
        return after

    def expression(self, node, state, graph, depth):
        for call in calls_in_evaluation_order(node):
            if state is UNREACHABLE:
                return state
            state = self.call(call, state, graph, depth)
        return state

    # calls -----------------------------------------------------------------------------------------
    def call(self, call: cst.Call, state, graph, depth):
        self._record(call, state)
        site = self.analysis.site(call)
        if site is not None and depth < MAX_CALL_DEPTH:
            callee = self.analysis.callee(call, site)
            if callee is not None and self.analysis.engine_routes.wraps_as_task(callee):
                callee = None  # calling a udf or a Ray task in the driver does not run its body here
            if callee is not None:
                after = self.function(callee, state, graph, depth + 1)
                if after is UNREACHABLE:
                    return UNREACHABLE  # every path through the callee ends the process
                state = state if state is not None else after
        if state is None:
            reason = self.detect(call, graph)
            if reason is not None:
                state = RuntimeStart(call, reason)
        return state

    def function(self, info: FunctionInfo, state, graph, depth):
        """Walk a called function; returns the state after the call (UNREACHABLE if it never
        returns)."""
        key = (info.node, state is not None, graph)
        if key in self._summaries:
            after = self._summaries[key]
            return after if after is UNREACHABLE or state is None else state
        if info.node in self._active or depth > MAX_CALL_DEPTH:
            return state
        self._active.add(info.node)
        try:
            after = self._with_function_frame(lambda: self.block(info.node.body.body, state, graph, depth))
        finally:
            self._active.discard(info.node)
        self._summaries[key] = after
        return after

    def exits_process(self, call: cst.Call) -> bool:
        site = self.analysis.site(call)
        if site is None:
            return False
        name = self.classifier.qualified_name(call.func, site.scope, site.order)
        if name in processes.PROCESS_EXITS:
            return True
        return (isinstance(call.func, cst.Name) and call.func.value in processes.BUILTIN_EXITS
                and not self.analysis.symbols.bindings_at(call.func.value, site.scope, site.order))

    def _record(self, node: cst.CSTNode, state) -> None:
        if state is UNREACHABLE:
            return
        if self._importing:
            self.on_import.add(node)
        if state is None:
            self.reached_unstarted.add(node)
        if self.state_at.get(node) is None:
            self.state_at[node] = state


def _instance_method(info: FunctionInfo | None, constructor: FunctionInfo) -> bool:
    return info is not None and info.class_info is constructor.class_info and info.self_name is not None


def _else_and_finally(node) -> list[cst.CSTNode]:
    parts = [part for part in (node.orelse, node.finalbody) if part is not None]
    return [n for part in parts for n in iter_tree(part)]


def _is_false(value) -> bool:
    return (isinstance(value, cst.Name) and value.value in ("False", "None")) or (
        isinstance(value, cst.Integer) and value.evaluated_value == 0)


def _is_true(test: cst.BaseExpression) -> bool:
    return (isinstance(test, cst.Name) and test.value == "True") or (
        isinstance(test, cst.Integer) and test.evaluated_value != 0)
