"""Which expression of a task is a row (TFP303): a task function's item (its parameter, or the
rows of a loop over its partition or batch), a cheap conversion of it (`np.asarray(row)`,
`row.astype(...)`, `data[i]`), a batch of one made of it (`row[None]`, `np.expand_dims(row, 0)`,
`np.array([row])`, `row.reshape(1, -1)`, `[row]` in a session's feed), and the first call that runs
a model on such a batch. Also where the model that call runs is kept: per worker
(engine_models.per_worker), or a driver's module-level model that travels with a Spark task."""

from __future__ import annotations

import libcst as cst

from tfproc_lint.analysis import engine_models, engines
from tfproc_lint.analysis.kinds import Kind
from tfproc_lint.analysis.symbols import FunctionInfo
from tfproc_lint.analysis.values import argument
from tfproc_lint.analysis.walk import calls_in, iter_tree
from tfproc_lint.knowledge import tensorflow
from tfproc_lint.knowledge import batches


def one_item_run(analysis, info: FunctionInfo) -> cst.Call | None:
    """The first call in `info` that runs a model on a batch of one made from the task's item."""
    return one_row_run(analysis, info.node.body, TaskItems(analysis, info))


def one_row_run(analysis, body: cst.CSTNode, items: TaskItems) -> cst.Call | None:
    """The first call in `body` that runs a model on a batch of one made from a row of `items`."""
    for call in calls_in(body):
        site = analysis.site(call)
        if site is None:
            continue
        if any(items.is_single_row(batch, feed) for batch, feed in model_inputs(analysis, call)):
            return call
    return None


def model_inputs(analysis, call: cst.Call) -> list[tuple[cst.BaseExpression, bool]]:
    """What a call gives a model as its batch: `model.predict(X)`, `model(X)`, `sess.run(f, {p: X})`;
    with True for a session's feed, where a list is a batch (for Keras it is the model's inputs)."""
    func = call.func
    if isinstance(func, cst.Attribute):
        receiver = engine_models.model_kind(analysis, func.value)  # also a Dask worker's `get_worker().model`
        if receiver is Kind.KERAS_MODEL and func.attr.value in batches.MODEL_BATCH_METHODS:
            given = argument(call, 0, "x")
            return [(given, False)] if given is not None else []
        if receiver is Kind.SESSION and func.attr.value in tensorflow.SESSION_RUNS:
            feed = argument(call, 1, "feed_dict")
            if isinstance(feed, cst.Dict):
                return [(e.value, True) for e in feed.elements if isinstance(e, cst.DictElement)]
            return []
    callee = analysis.kind_of(func)
    if engine_models.model_kind(analysis, func) in (Kind.KERAS_MODEL, Kind.SAVED_MODEL, Kind.TF_FUNCTION) \
            and callee.origin is not call \
            and call.args and call.args[0].keyword is None and not call.args[0].star:
        return [(call.args[0].value, False)]
    return []


class TaskItems:
    """Which expressions of a task function are its item, a row, and a batch of one made of it."""

    def __init__(self, analysis, info: FunctionInfo | None, scope=None, params: set[str] | None = None) -> None:
        self.analysis = analysis
        self.info = info
        self.scope = info.scope if info is not None else scope
        if params is None:
            params = _parameter_names(info.node.params)
            params = set(params[1:] if info.self_name else params)
        self.params = params

    @classmethod
    def of_lambda(cls, analysis, worker) -> TaskItems:
        """A lambda's parameters are its items; it has no locals of its own."""
        return cls(analysis, None, worker.scope, set(_parameter_names(worker.lambda_node.params)))

    def loop_rows(self) -> TaskItems:
        """The same task read as a partition: its items are the targets of the loops (and
        comprehensions) that walk its parameter, or the rows of an element of it (`for pdf in
        batches: for row in pdf.to_numpy()`), not the parameter itself."""
        rows: set[str] = set()
        walked = True
        while walked:
            walked = False
            for node in iter_tree(self.info.node.body):
                if isinstance(node, (cst.For, cst.CompFor)) and self._walks(node.iter, self.params | rows):
                    names = _target_names(node.target) - rows
                    if names:
                        rows |= names
                        walked = True
        return TaskItems(self.analysis, self.info, params=rows)

    def _walks(self, iterable: cst.BaseExpression, sources: set[str], depth: int = 0) -> bool:
        """`iterable` yields the elements of one of `sources`: the name, a method or attribute of it
        (`pdf.to_numpy()`, `pdf.iterrows()`, `pdf.values`), or `enumerate(...)`/`zip(...)` of it."""
        if depth > 4:
            return False
        if isinstance(iterable, cst.Name):
            return iterable.value in sources
        if isinstance(iterable, (cst.Attribute, cst.Subscript)):
            return self._walks(iterable.value, sources, depth + 1)
        if isinstance(iterable, cst.Call):
            func = iterable.func
            symbols = self.analysis.symbols
            if isinstance(func, cst.Name) and func.value in batches.ROW_ITERATIONS \
                    and not symbols.bindings_at(func.value, self.scope, symbols.end_of_file):
                return any(self._walks(arg.value, sources, depth + 1) for arg in iterable.args)
            if isinstance(func, cst.Attribute) and self._name(func) is None:
                return self._walks(func.value, sources, depth + 1)
        return False

    def _local_value(self, name: cst.Name) -> cst.BaseExpression | None:
        """The one value a local name of the task was given (`batch = row[None]`)."""
        if self.info is None:
            return None
        bindings = self.info.scope.bindings.get(name.value, [])
        if len(bindings) == 1 and bindings[0].kind == "assign" and bindings[0].value is not None:
            return bindings[0].value
        return None

    def _name(self, node: cst.BaseExpression) -> str | None:
        return self.analysis.classifier.qualified_name(node, self.scope, self.analysis.symbols.end_of_file)

    def is_single_row(self, batch: cst.BaseExpression, feed: bool, depth: int = 0) -> bool:
        """`x[None]`, `x[np.newaxis, ...]`, `np.expand_dims(x, 0)`, `np.array([x])`, `x.reshape(1, -1)`, or
        `[x]` in a session's feed, where x is a row of the task's item."""
        if isinstance(batch, cst.Name) and depth < 2:
            value = self._local_value(batch)
            return value is not None and self.is_single_row(value, feed, depth + 1)
        item = self._wrapped_item(batch, feed)
        return item is not None and self.is_row(item)

    def _wrapped_item(self, batch: cst.BaseExpression, feed: bool) -> cst.BaseExpression | None:
        if isinstance(batch, cst.Subscript) and batch.slice and isinstance(batch.slice[0].slice, cst.Index):
            first = batch.slice[0].slice.value
            if (isinstance(first, cst.Name) and first.value == "None") or self._name(first) in batches.NEW_AXIS:
                return batch.value
            return None
        if feed and isinstance(batch, (cst.List, cst.Tuple)) and len(batch.elements) == 1 \
                and not isinstance(batch.elements[0], cst.StarredElement):
            return batch.elements[0].value
        if not isinstance(batch, cst.Call) or not batch.args:
            return None
        name = self._name(batch.func)
        first = batch.args[0].value
        if name in batches.EXPAND_DIMS:
            axis = argument(batch, 1, "axis")
            return first if isinstance(axis, cst.Integer) and axis.evaluated_value == 0 else None
        if name in batches.ARRAYS_FROM_LISTS and isinstance(first, (cst.List, cst.Tuple)) and len(first.elements) == 1 \
                and not isinstance(first.elements[0], cst.StarredElement):
            return first.elements[0].value
        if name == "numpy.reshape" and len(batch.args) > 1 and _leading_one(batch.args[1:]):
            return first
        if isinstance(batch.func, cst.Attribute) and batch.func.attr.value == "reshape" and _leading_one(batch.args):
            return batch.func.value
        return None

    def is_row(self, node: cst.BaseExpression, depth: int = 0) -> bool:
        """The task's item, or a cheap conversion of it: not read from a file or decoded."""
        if depth > 4:
            return False
        if isinstance(node, cst.Name):
            if node.value in self.params:
                return True
            value = self._local_value(node)
            return value is not None and self.is_row(value, depth + 1)
        if isinstance(node, cst.Subscript):  # row["x"], task[0], data[i] with i from the task
            return self.is_row(node.value, depth + 1) or any(
                isinstance(element.slice, cst.Index) and self.is_row(element.slice.value, depth + 1)
                for element in node.slice)
        if isinstance(node, cst.Attribute):
            return self.is_row(node.value, depth + 1)
        if isinstance(node, (cst.List, cst.Tuple)) and node.elements:  # a row udf's columns: `[[age, income]]`
            return all(not isinstance(e, cst.StarredElement) and self.is_row(e.value, depth + 1)
                       for e in node.elements)
        if isinstance(node, cst.BinaryOperation):
            return self.is_row(node.left, depth + 1) or self.is_row(node.right, depth + 1)
        if isinstance(node, cst.Call):
            func = node.func
            if self._name(func) in batches.ROW_CONVERSIONS and node.args:
                return self.is_row(node.args[0].value, depth + 1)
            if isinstance(func, cst.Attribute) and func.attr.value in batches.ROW_METHODS and self._name(func) is None:
                return self.is_row(func.value, depth + 1)  # row.astype("float32"), row.ravel()
        return False


def _leading_one(args) -> bool:
    """`reshape(1, -1)` or `reshape((1, -1))`: a batch dimension of one in front of the rest."""
    first = args[0].value
    if isinstance(first, (cst.Tuple, cst.List)) and len(first.elements) > 1:
        first = first.elements[0].value
    elif len(args) < 2:
        return False
    return isinstance(first, cst.Integer) and first.evaluated_value == 1


def _parameter_names(params: cst.Parameters) -> list[str]:
    """Its parameters, `*args` included (`def score(*features)` given one row's columns)."""
    star = [params.star_arg] if isinstance(params.star_arg, cst.Param) else []
    return [p.name.value for p in [*params.posonly_params, *params.params, *star, *params.kwonly_params]]


def _target_names(target: cst.BaseExpression) -> set[str]:
    """The names a loop binds: `row`, `i, row`, `(_, row)`."""
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return set().union(*(_target_names(e.value) for e in target.elements if not isinstance(e, cst.StarredElement)))
    return set()


def model_kept_per_worker(analysis, run: cst.Call, function, fresh_globals: bool = False) -> bool:
    """The model `run` calls is kept per worker process (see engine_models.per_worker)."""
    model = _model_called(analysis, run)
    site = analysis.site(run)
    if site is None:
        return False
    return engine_models.per_worker(analysis, model, site.scope, function, fresh_globals)


def driver_model_in_spark_task(analysis, crossing, run: cst.Call) -> bool:
    """A Spark task that runs a model the driver made at module level: it travels with the task
    function (Spark unpickles it once per task, not once per row: no TFP103), so every row is one
    model call on a model that is already there."""
    if engines.engine(crossing) != "spark":
        return False
    model = _model_called(analysis, run)
    site = analysis.site(run)
    if not isinstance(model, cst.Name) or site is None:
        return False
    owner = analysis.symbols.resolving_scope(model.value, site.scope)
    bindings = owner.bindings.get(model.value, []) if owner is not None else []
    if owner is None or owner.kind != "module" or any(b.scope.kind == "function" for b in bindings):
        return False
    value = analysis.classifier.classify(model, site.scope, analysis.symbols.end_of_file)
    return value.kind in (Kind.KERAS_MODEL, Kind.SAVED_MODEL) \
        and engines.crossing_failure(analysis, crossing, model, value, captured=True) is None


def _model_called(analysis, run: cst.Call) -> cst.BaseExpression:
    """The model a run calls: the receiver of `model.predict(...)`, or what `model(...)` calls."""
    func = run.func
    return func.value if isinstance(func, cst.Attribute) and engine_models.model_kind(analysis, func.value) \
        else func
