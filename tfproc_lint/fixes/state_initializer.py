"""TFP102 fix: workers load the model themselves, once, instead of receiving it with every task.

    def score(model, row): ...                 _model = None
    model = load_model(path)           ->
    Pool(2).starmap(score,                     def _init_model(path):
        [(model, r) for r in rows])                global _model
                                                   _model = load_model(path)

                                               def score(row):
                                                   ... _model ...

                                               Pool(2, initializer=_init_model, initargs=(path,))
                                                   .starmap(score, [(r,) for r in rows])

Offered for a loader call (`load_model(...)`, `tf.saved_model.load(...)`) bound once in the same
function as the pool, sent by `functools.partial`, a `starmap` tuple, an `apply_async` args tuple or
`submit` arguments, to a module-level worker used by that pool alone. The initializer's parameters
are named after the loader's arguments (`MODEL_PATH` -> `model_path`); literal arguments stay in
the initializer; an import of `partial` that is no longer used goes.
"""

from __future__ import annotations

import libcst as cst

from tfproc_lint.analysis.file_analysis import FileAnalysis
from tfproc_lint.analysis.kinds import Kind
from tfproc_lint.analysis.routes import Crossing, RouteKind, has_initializer
from tfproc_lint.analysis.walk import iter_tree, read_names
from tfproc_lint.analysis.workers import Owner, WorkerKind
from tfproc_lint.diagnostics import Applicability
from tfproc_lint.fixes.base import FixBuilder, Plan, Refusal
from tfproc_lint.fixes.common import (
    add_keyword, blank_lines_above, drop_unused_import, global_declarations, imported_worker, initializer_function,
    parameter_name_for, rename, unique_name, worker_global_name,
)
from tfproc_lint.fixes.worker_initializer import used_only_by
from tfproc_lint.knowledge import processes, tensorflow
from tfproc_lint.knowledge.processes import TaskData


class LoadStateInWorker(FixBuilder):
    applicability = Applicability.UNSAFE

    def __init__(self, crossing: Crossing, sent: cst.BaseExpression) -> None:
        self.crossing = crossing
        self.sent = sent
        pool = "ProcessPoolExecutor" if crossing.owner.kind is Kind.EXECUTOR else "Pool"
        self.title = f"load it once per worker with {pool}(initializer=...) and send only data"

    def plan(self, analysis: FileAnalysis) -> Plan | Refusal:
        crossing, sent = self.crossing, self.sent
        value = analysis.classifier.classify(sent, crossing.site.scope, crossing.site.order)
        if value.kind not in (Kind.KERAS_MODEL, Kind.SAVED_MODEL):
            return self.refuse()  # tf.function, Dataset, session: nothing a worker could load from a path
        owner = analysis.owners.get(crossing.owner.origin)
        if owner is None or has_initializer(owner.construction, owner.value.kind) or not isinstance(sent, cst.Name):
            return self.refuse()
        if analysis.start_method(owner.value)[0] == "fork":
            started = next((analysis.execution.started_before(c) for c in owner.fork_calls
                            if analysis.execution.started_before(c)), None)
            if started is not None:
                return self.refuse(f"the forked workers would load it after the parent started TensorFlow "
                                   f"(line {analysis.line_of(started.call)}) and can hang; start the pool from "
                                   'multiprocessing.get_context("spawn") first')
        loader = self._loader(analysis, sent)
        if loader is None:
            return self.refuse(f"`{sent.value}` is not made by one loader call (load_model, saved_model.load) "
                               "beside the pool")
        binding, load_call = loader
        worker = analysis.worker(crossing.callable, crossing.callable_scope, crossing.site.order) \
            if crossing.callable is not None else None
        module_scope = analysis.symbols.module_scope
        imported = imported_worker(analysis, [worker])
        if imported:
            return self.refuse(f"{imported} or change")
        if worker is None or worker.kind is not WorkerKind.FUNCTION or worker.function.scope.parent is not module_scope:
            return self.refuse("the worker is not a module-level function")
        function = worker.function.node
        if not used_only_by(analysis, function.name.value, owner):
            return self.refuse(f"`{function.name.value}` is also used outside this pool")
        removals = self._removals(analysis, owner, sent.value)
        if removals is None:
            return self.refuse()
        index, edits = removals
        params = function.params.params
        if function.params.posonly_params or index >= len(params) or params[index].default is not None:
            return self.refuse()
        parameter = params[index].name.value
        global_name = worker_global_name(analysis, sent.value, set())
        init_name = unique_name(analysis, f"_init{global_name}")
        init_def, initargs = self._initializer(init_name, global_name, load_call, function)
        if init_def is None:
            return self.refuse()
        mapping: dict = dict(edits)
        rename(mapping, function.body, {parameter: global_name})

        def rewrite(updated: cst.FunctionDef):
            without = self._without_parameter(updated, index)
            return cst.FlattenSentinel([
                *global_declarations([global_name], blank_lines_above(updated)),
                init_def,
                without.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()]),
            ])

        mapping[function] = rewrite

        def add_initializer(updated):
            updated = add_keyword(updated, "initializer", cst.Name(init_name))
            return add_keyword(updated, "initargs", initargs) if initargs is not None else updated

        mapping[owner.construction] = add_initializer
        scope_node = analysis.owners[crossing.owner.origin].site.scope.node
        other_reads = [n for n in read_names(scope_node, enter_scopes=False) if n.value == sent.value and n is not sent]
        if not other_reads and len(_crossings_with(analysis, owner, sent.value)) == 1:
            mapping[binding] = cst.RemovalSentinel.REMOVE  # the parent no longer needs the model
        for container in edits:  # `partial(worker, model)` became `worker`: is `partial` still used?
            if isinstance(container, cst.Call) and _is_partial_call(container) and len(container.args) == 2:
                head = container.func if isinstance(container.func, cst.Name) else container.func.value
                if isinstance(head, cst.Name):
                    reads = [n for n in read_names(analysis.module) if n.value == head.value]
                    drop_unused_import(analysis, head.value, len(reads) - 1, mapping)
        return mapping

    def _loader(self, analysis: FileAnalysis, sent: cst.Name):
        """The one `sent = loader(...)` statement in the pool's function, before the pool."""
        site = self.crossing.site
        bindings = analysis.symbols.bindings_at(sent.value, site.scope, site.order)
        owner_site = analysis.owners[self.crossing.owner.origin].site
        if len(bindings) != 1 or bindings[0].kind != "assign" or bindings[0].scope is not owner_site.scope:
            return None
        value = bindings[0].value
        if not isinstance(value, cst.Call):
            return None
        name = analysis.classifier.qualified_name(value.func, bindings[0].scope, bindings[0].order)
        if name not in tensorflow.FIX_LOADERS or any(arg.star for arg in value.args):
            return None
        statement = _assignment_statement(analysis, value)
        return (statement, value) if statement is not None else None

    def _removals(self, analysis: FileAnalysis, owner: Owner, name: str):
        """Edits that stop sending `name`, and the worker parameter index it was sent to."""
        edits, index = {}, None
        for crossing in _crossings_with(analysis, owner, name):
            found = _sent_position(crossing, name)
            if found is None:
                return None
            position, container, element = found
            if index is not None and position != index:
                return None
            index = position
            edits[container] = _drop_element(container, element)
        return (index, edits) if index is not None else None

    @staticmethod
    def _initializer(init_name: str, global_name: str, load_call: cst.Call, template: cst.FunctionDef):
        """The initializer and its `initargs` (None when every argument is a literal)."""
        params, initargs, call_args = [], [], []
        for arg in load_call.args:
            if isinstance(arg.value, (cst.BaseNumber, cst.BaseString)) or (
                    isinstance(arg.value, cst.Name) and arg.value.value in ("True", "False", "None")):
                call_args.append(arg)  # a literal stays where it is
                continue
            param = parameter_name_for(arg.value) or (arg.keyword.value if arg.keyword else None)
            if param is None or param in params or param == global_name:
                return None, None
            params.append(param)
            initargs.append(cst.Element(arg.value))
            call_args.append(arg.with_changes(value=cst.Name(param)))
        if len(initargs) == 1:
            initargs[0] = initargs[0].with_changes(comma=cst.Comma())
        else:
            initargs = [e.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                        for e in initargs[:-1]] + initargs[-1:]
        assignment = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(global_name))],
                                                         load_call.with_changes(args=call_args))])
        init_def = initializer_function(init_name, params, [global_name], [assignment], template)
        return init_def, (cst.Tuple(initargs) if initargs else None)

    @staticmethod
    def _without_parameter(function: cst.FunctionDef, index: int):
        params = list(function.params.params)
        del params[index]
        if params:
            params[-1] = params[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return function.with_changes(params=function.params.with_changes(params=params))


def _crossings_with(analysis: FileAnalysis, owner: Owner, name: str) -> list[Crossing]:
    return [c for c in analysis.crossings if c.owner.origin is owner.construction
            and any(isinstance(s.node, cst.Name) and s.node.value == name for s in c.sent)]


def _sent_position(crossing: Crossing, name: str):
    """(parameter index, container node, element) for the supported shapes of sending `name`."""
    call = crossing.call
    route = crossing.route
    first = call.args[0].value if call.args else None
    if isinstance(first, cst.Call) and first.args and _is_name(first.args[0].value, crossing.callable):
        for position, arg in enumerate(first.args[1:]):  # partial(worker, state, ...)
            if _is_name(arg.value, name) and arg.keyword is None:
                return position, first, arg
        return None
    pool_method = processes.POOL_TASK_METHODS.get(route.method) if route.kind is RouteKind.POOL_TASK else None
    data = pool_method.data if pool_method is not None else None
    if data is TaskData.STAR_ITERABLE and len(call.args) >= 2:
        iterable = call.args[1].value
        if isinstance(iterable, (cst.ListComp, cst.GeneratorExp)) and isinstance(iterable.elt, cst.Tuple):
            return _in_tuple(iterable.elt, name)
    if data is TaskData.ARGS and len(call.args) >= 2 \
            and isinstance(call.args[1].value, cst.Tuple):
        return _in_tuple(call.args[1].value, name)
    if route.kind is RouteKind.EXECUTOR_TASK and route.method == "submit":
        for position, arg in enumerate(call.args[1:]):
            if _is_name(arg.value, name) and arg.keyword is None:
                return position, call, arg
    return None


def _in_tuple(tuple_node: cst.Tuple, name: str):
    for position, element in enumerate(tuple_node.elements):
        if _is_name(element.value, name):
            return position, tuple_node, element
    return None


def _is_name(node, name) -> bool:
    if isinstance(name, cst.Name):
        name = name.value
    return isinstance(node, cst.Name) and node.value == name


def _drop_element(container: cst.CSTNode, element: cst.CSTNode):
    """A replacement for `container` (a tuple, a `partial(...)` or `submit(...)` call) without `element`."""
    def drop(updated):
        if isinstance(container, cst.Tuple):
            kept = [new for new, old in zip(updated.elements, container.elements, strict=True) if old is not element]
            if len(kept) == 1:
                kept = [kept[0].with_changes(comma=cst.Comma())]
            elif kept:
                kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return updated.with_changes(elements=kept)
        kept = [new for new, old in zip(updated.args, container.args, strict=True) if old is not element]
        if _is_partial_call(container) and len(kept) == 1:
            return kept[0].value  # partial(worker) -> worker
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated.with_changes(args=kept)
    return drop


def _is_partial_call(call: cst.Call) -> bool:
    func = call.func
    return (isinstance(func, cst.Name) and func.value == "partial") or (
        isinstance(func, cst.Attribute) and func.attr.value == "partial")


def _assignment_statement(analysis: FileAnalysis, value: cst.Call):
    """The `SimpleStatementLine` holding `name = value` alone."""
    for node in iter_tree(analysis.module):
        if isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1 and isinstance(node.body[0], cst.Assign) \
                and node.body[0].value is value and len(node.body[0].targets) == 1:
            return node
    return None
