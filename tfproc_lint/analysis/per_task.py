"""What a worker function builds on every call: the TensorFlow state (a model, a session, a graph)
it makes each time it runs, not behind a cache, and whether one build per worker could serve every
call (the build does not read the call's data, and the function does not train what it builds).
Used by TFP301 for the functions of this file and by the project summaries for another module's."""

from __future__ import annotations

import libcst as cst

from tfproc_lint.analysis.engines import ray_serve
from tfproc_lint.analysis.dependence import derived_names, reads_any
from tfproc_lint.analysis.kinds import Kind
from tfproc_lint.analysis.names import is_tensorflow
from tfproc_lint.analysis.symbols import FunctionInfo
from tfproc_lint.analysis.walk import calls_in, calls_in_evaluation_order
from tfproc_lint.knowledge import tensorflow

_CACHE_DECORATORS = ("lru_cache", "cache", "cached", "memoize", "cached_property")


def movable_builders(analysis, info: FunctionInfo) -> list[cst.Call]:
    """The calls by which `info` builds TF state on every call where one build per worker would
    serve every call; [] when it builds nothing per call, trains what it builds (the build is the
    work), or builds from the call's data."""
    builders = per_task_builders(analysis, info)
    if not builders or trains(info):
        return []
    derived = derived_names(info.node)
    if any(depends_on_task(analysis, info, builder, derived) for builder in builders):
        return []
    return builders


def per_task_builders(analysis, info: FunctionInfo, depth: int = 0) -> list[cst.Call]:
    """The calls in `info` that build TF state on every call (not behind a cache), directly or
    through a helper function of the same file."""
    builders = []
    for call in _unguarded_calls(info.node.body.body):
        if analysis.tf.builds_state(call):
            builders.append(call)
            continue
        site = analysis.site(call)
        if depth < 2 and site is not None:
            callee = analysis.worker(call.func, site.scope, site.order)
            helper = callee.function
            if helper is not None and helper is not info and not _is_cached(helper) \
                    and not ray_serve.cached_by_serve(analysis, helper):
                if per_task_builders(analysis, helper, depth + 1):
                    builders.append(call)
    return builders


def depends_on_task(analysis, info: FunctionInfo, builder: cst.Call, derived: set[str]) -> bool:
    """The build reads the task's data: in its own arguments (`load_model(task_path)`), or, for a
    graph or session, in what was built into the graph before it (`tf.placeholder(shape=task_dim)`,
    `build_graph(task)`)."""
    if reads_any(builder, derived):
        return True
    if analysis.kind_of(builder).kind not in (Kind.SESSION, Kind.GRAPH):
        return False
    order = analysis.symbols.order_of_node.get(builder, 0)
    for call in calls_in(info.node.body):
        call_site = analysis.site(call)
        if call_site is None or not reads_any(call, derived):
            continue
        if _runs_task_fetches(analysis, call, derived):
            return True  # sess.run(fetches built from the task): the graph is the task's
        if analysis.symbols.order_of_node.get(call, 0) >= order:
            continue
        name = analysis.name_of(call.func)
        if is_tensorflow(name) or analysis.callee(call, call_site):
            return True
    return False


def _runs_task_fetches(analysis, call: cst.Call, derived: set[str]) -> bool:
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value in tensorflow.SESSION_RUNS and call.args):
        return False
    return analysis.kind_of(func.value).kind is Kind.SESSION and reads_any(call.args[0].value, derived)


def trains(info: FunctionInfo) -> bool:
    """The task calls a training method (`model.fit`, `optimizer.minimize`, ...)."""
    return any(isinstance(call.func, cst.Attribute) and call.func.attr.value in tensorflow.TRAINING_METHODS
               for call in calls_in(info.node.body))


def _unguarded_calls(statements):
    """Calls made on every execution: not under a cache check (`if x is None`, `except`)."""
    for statement in statements:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            continue
        if isinstance(statement, cst.If):
            yield from calls_in_evaluation_order(statement.test)
            if not _is_cache_check(statement.test):
                yield from _unguarded_calls(statement.body.body)
            continue
        if isinstance(statement, cst.Try):
            yield from _unguarded_calls(statement.body.body)
            for part in (statement.orelse, statement.finalbody):
                if part is not None:
                    yield from _unguarded_calls(part.body.body)
            continue
        if isinstance(statement, cst.SimpleStatementLine):
            yield from calls_in_evaluation_order(statement)
            continue
        if isinstance(statement, cst.With):
            for item in statement.items:
                yield from calls_in_evaluation_order(item.item)
            yield from _unguarded_calls(statement.body.body)
            continue
        if isinstance(statement, (cst.For, cst.While)):
            yield from calls_in_evaluation_order(statement.iter if isinstance(statement, cst.For) else statement.test)
            yield from _unguarded_calls(statement.body.body)


def _is_cache_check(test: cst.BaseExpression) -> bool:
    """`x is None`, `not x`, `key not in cache`, `hasattr(...)`, combined with and/or."""
    if isinstance(test, cst.BooleanOperation):
        return _is_cache_check(test.left) or _is_cache_check(test.right)
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return isinstance(test.expression, (cst.Name, cst.Attribute, cst.Subscript, cst.Call))
    if isinstance(test, cst.Comparison):
        for target in test.comparisons:
            if isinstance(target.operator, (cst.In, cst.NotIn)):
                return True
            if isinstance(target.operator, (cst.Is, cst.IsNot)) and isinstance(target.comparator, cst.Name) \
                    and target.comparator.value == "None":
                return True
    if isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "hasattr":
        return True
    return False


def _is_cached(info: FunctionInfo) -> bool:
    return any(name.split(".")[-1] in _CACHE_DECORATORS for name in info.decorator_names)
