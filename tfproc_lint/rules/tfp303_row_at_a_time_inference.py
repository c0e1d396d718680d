"""TFP303 (opt-in): a process pool task that runs the model on one item, mapped over many items."""

from __future__ import annotations

import libcst as cst

from tfproc_lint.analysis import api
from tfproc_lint.analysis.kinds import Kind
from tfproc_lint.analysis.symbols import FunctionInfo
from tfproc_lint.analysis.values import argument
from tfproc_lint.analysis.walk import calls_in
from tfproc_lint.analysis.workers import RUNS_A_FUNCTION
from tfproc_lint.diagnostics import Severity
from tfproc_lint.rules.base import Example, Report, Rule

# Rows/s of the same model served three ways on 2 cores (one row = 64 floats, 2 spawn workers with an
# initializer): one row per pool task, 64-row chunks per pool task, one process calling the model on
# 64 rows at a time. runtime_probe's benchmark, patterns init-spawn, chunked and batched: the medians
# of the full run committed in docs/probe/report.json (`make probe`, 2026-12-01, TF 2.21 CPU, a shared
# 2-core machine). tests/test_opt_in_rules.py checks them against that report.
ROWS_PER_S = {
    "graph": {"init-spawn": 2025, "chunked": 47764, "batched": 56392},
    "keras": {"init-spawn": 2157, "chunked": 40485, "batched": 40250},
    "savedmodel": {"init-spawn": 1734, "chunked": 38953, "batched": 37597},
}
CHUNK_ROWS = 64
MAP_METHODS = frozenset({"map", "imap", "imap_unordered", "map_async", "starmap", "starmap_async", "amap", "uimap"})
ONE_TASK_METHODS = frozenset({"apply", "apply_async", "submit"})


def speedup(pattern: str) -> tuple[float, float]:
    """The lowest and highest rows/s ratio of `pattern` over one row per task, across workloads."""
    ratios = [rates[pattern] / rates["init-spawn"] for rates in ROWS_PER_S.values()]
    return min(ratios), max(ratios)


def _range(pattern: str) -> str:
    low, high = speedup(pattern)
    return f"{low:.0f}x" if round(low) == round(high) else f"{low:.0f}-{high:.0f}x"


def _rates(pattern: str) -> str:
    rates = [workload[pattern] for workload in ROWS_PER_S.values()]
    return f"{min(rates):,}-{max(rates):,}"


class RowAtATimeInference(Rule):
    code = "TFP303"
    name = "row-at-a-time-inference"
    summary = "process pool task runs the model on one item at a time; send chunks or batch in one process"
    severity = Severity.WARNING
    default_enabled = False
    what_it_does = (
        "Reports a process pool task (`Pool.map`/`imap`/`starmap`/..., `ProcessPoolExecutor.map`, or "
        "`apply_async`/`submit` in a loop) that calls a TensorFlow model on a batch of one made from "
        "its item: `model.predict(x[None])`, `model(x[np.newaxis, ...])`, "
        "`model.predict_on_batch(np.expand_dims(x, 0))`, `np.array([x])`, `x.reshape(1, -1)`, "
        "`sess.run(fetches, {placeholder: [x]})`. The model is a Keras model, a loaded SavedModel, a "
        "`tf.function` or a session, resolved through the file's names (an initializer's global, a "
        "per-task build). The item is the task's argument or a cheap conversion of it (`np.asarray`, "
        "`.astype`, arithmetic, an index into an array). Opt-in: whether batching pays depends on the "
        "work, so the rule is off until selected."
    )
    why_bad = (
        "Each task pays a model call, a pickled round trip to the worker and the pool's bookkeeping for "
        "one row, and a model call costs about as much for one row as for dozens. With the same model "
        f"on 2 cores, chunks of {CHUNK_ROWS} rows through the same pool ran {_range('chunked')} the rows/s "
        f"of one row per task, and one process calling the model on {CHUNK_ROWS} rows at a time ran "
        f"{_range('batched')} (one row per task: {_rates('init-spawn')} rows/s)."
    )
    known_problems = (
        "Not reported when an item is more than a row: a path or a file to read and decode (an image, "
        "an audio clip), a shard of a dataset, a batch (the task calls the model on its argument as "
        "it is), or an item turned into the model's input by a function the rule does not know. An "
        "item that is large in memory (a full-size image array) is reported: batching helps less "
        f"there than for the {CHUNK_ROWS}-float rows measured. Items of different shapes (sentences "
        "of different lengths) need padding before they batch. Tasks given through joblib are not "
        "checked."
    )
    fix_safety = (
        "No automatic fix: the task function's signature and the results' shape change. Send chunks "
        "(`pool.map(predict_chunk, np.array_split(rows, n))`, where `predict_chunk` runs the model "
        "once on its chunk) and concatenate the results, or drop the pool and call the model on "
        "batches in one process."
    )
    evidence = (
        "runtime_probe's benchmark serves the same model (4xDense(256) on rows of 64 floats, as a TF1 "
        "graph, a Keras model and a SavedModel) three ways on 2 cores: one row per task in a 2-worker "
        f"spawn pool with an initializer, {CHUNK_ROWS}-row chunks per task in the same pool, and one "
        f"process with {CHUNK_ROWS} rows per call. Medians of 5 runs of the full probe (`make probe`) "
        "on a shared machine, rows/s "
        + "; ".join(f"{workload}: {rates['init-spawn']:,} / {rates['chunked']:,} / {rates['batched']:,}"
                    for workload, rates in ROWS_PER_S.items())
        + ". The scenario tfp303_row_pool_bad (one row per task) must be slower than its chunked twin "
        "tfp303_chunked_pool_fixed, and tfp303_batched_one_process_fixed faster than it, by 3x or more."
    )
    references = (
        "https://docs.python.org/3/library/multiprocessing.html#multiprocessing.pool.Pool.map",
        "https://keras.io/api/models/model_training_apis/#predictonbatch-method",
        "https://numpy.org/doc/stable/reference/generated/numpy.array_split.html",
    )
    bad_examples = (
        Example(
            """\
            import multiprocessing as mp
            import tensorflow as tf

            model = None

            def load():
                global model
                model = tf.keras.models.load_model('model.keras')

            def predict_row(row):
                return model.predict_on_batch(row[None])[0]

            if __name__ == '__main__':
                with mp.get_context('spawn').Pool(2, initializer=load) as pool:
                    scores = pool.map(predict_row, rows)
            """,
            ("TFP303",),
            config=(("extend-select", "TFP303"),),
        ),
        Example(
            """\
            from concurrent.futures import ProcessPoolExecutor
            import numpy as np
            import tensorflow.compat.v1 as tf

            sess = features = scores = None

            def start():
                global sess, features, scores
                features = tf.placeholder(tf.float32, [None, 64])
                scores = tf.layers.dense(features, 1)
                sess = tf.Session()
                sess.run(tf.global_variables_initializer())

            def score(row):
                return sess.run(scores, {features: [row]})[0]

            if __name__ == '__main__':
                with ProcessPoolExecutor(2, initializer=start) as executor:
                    futures = [executor.submit(score, row) for row in np.load('rows.npy')]
            """,
            ("TFP303",),
            config=(("extend-select", "TFP3"),),
        ),
    )
    good_examples = (
        Example(
            """\
            import multiprocessing as mp
            import numpy as np
            import tensorflow as tf

            model = None

            def load():
                global model
                model = tf.keras.models.load_model('model.keras')

            def predict_chunk(chunk):
                return model.predict_on_batch(chunk)

            if __name__ == '__main__':
                with mp.get_context('spawn').Pool(2, initializer=load) as pool:
                    scores = np.concatenate(pool.map(predict_chunk, np.array_split(rows, 16)))
            """,
            config=(("extend-select", "TFP303"),),
        ),
        Example(
            """\
            import multiprocessing as mp
            import tensorflow as tf

            model = None

            def load():
                global model
                model = tf.keras.models.load_model('classifier.keras')

            def classify(path):
                image = tf.io.decode_jpeg(tf.io.read_file(path))
                return model.predict_on_batch(image[None])[0]

            if __name__ == '__main__':
                with mp.get_context('spawn').Pool(2, initializer=load) as pool:
                    labels = pool.map(classify, image_paths)
            """,
            config=(("extend-select", "TFP303"),),
        ),
    )

    def check_crossing(self, crossing, analysis):
        if crossing.owner.kind not in (Kind.POOL, Kind.EXECUTOR) or crossing.callable is None:
            return
        method = crossing.route.method if crossing.route.is_pool_task else ""
        if method not in MAP_METHODS and method not in ONE_TASK_METHODS:
            return
        worker = analysis.worker(crossing.callable, crossing.callable_scope, crossing.site.order)
        if worker.function is None or worker.kind not in RUNS_A_FUNCTION:
            return
        run = one_item_run(analysis, worker.function)
        if run is None or (method in ONE_TASK_METHODS and not analysis.loops_around(crossing.call)):
            return
        yield Report(
            crossing.callable,
            f"`{analysis.code(crossing.callable, 30)}` runs the model on one item per task (line "
            f"{analysis.line_of(run)}: `{analysis.code(run, 40)}`): one model call per row; send chunks of rows "
            f"(`{analysis.code(crossing.call.func.value, 20)}.map(predict_chunk, "
            f"np.array_split(rows, n))`) or call the model on "
            f"batches in one process (measured on 2 cores: {CHUNK_ROWS}-row chunks {_range('chunked')} the rows/s "
            f"of one row per task, one process with {CHUNK_ROWS} rows per call {_range('batched')})",
            related=((run, "the model runs on one item here"),),
        )


def one_item_run(analysis, info: FunctionInfo) -> cst.Call | None:
    """The first call in `info` that runs a model on a batch of one made from the task's item."""
    items = _ItemsOf(analysis, info)
    for call in calls_in(info.node.body):
        site = analysis.site(call)
        if site is None:
            continue
        if any(items.is_single_row(batch, feed) for batch, feed in _model_inputs(analysis, call)):
            return call
    return None


def _model_inputs(analysis, call: cst.Call) -> list[tuple[cst.BaseExpression, bool]]:
    """What a call gives a model as its batch: `model.predict(X)`, `model(X)`, `sess.run(f, {p: X})`;
    with True for a session's feed, where a list is a batch (for Keras it is the model's inputs)."""
    func = call.func
    if isinstance(func, cst.Attribute):
        receiver = analysis.kind_of(func.value).kind
        if receiver is Kind.KERAS_MODEL and func.attr.value in api.MODEL_BATCH_METHODS:
            given = argument(call, 0, "x")
            return [(given, False)] if given is not None else []
        if receiver is Kind.SESSION and func.attr.value in api.SESSION_RUNS:
            feed = argument(call, 1, "feed_dict")
            if isinstance(feed, cst.Dict):
                return [(e.value, True) for e in feed.elements if isinstance(e, cst.DictElement)]
            return []
    callee = analysis.kind_of(func)
    if callee.kind in (Kind.KERAS_MODEL, Kind.SAVED_MODEL, Kind.TF_FUNCTION) and callee.origin is not call \
            and call.args and call.args[0].keyword is None and not call.args[0].star:
        return [(call.args[0].value, False)]
    return []


class _ItemsOf:
    """Which expressions of a task function are its item, a row, and a batch of one made of it."""

    def __init__(self, analysis, info: FunctionInfo) -> None:
        self.analysis = analysis
        self.info = info
        params = info.node.params
        names = [p.name.value for p in [*params.posonly_params, *params.params, *params.kwonly_params]]
        self.params = set(names[1:] if info.self_name else names)

    def _local_value(self, name: cst.Name) -> cst.BaseExpression | None:
        """The one value a local name of the task was given (`batch = row[None]`)."""
        bindings = self.info.scope.bindings.get(name.value, [])
        if len(bindings) == 1 and bindings[0].kind == "assign" and bindings[0].value is not None:
            return bindings[0].value
        return None

    def _name(self, node: cst.BaseExpression) -> str | None:
        return self.analysis.classifier.qualified_name(node, self.info.scope, self.analysis.symbols.end_of_file)

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
            if (isinstance(first, cst.Name) and first.value == "None") or self._name(first) in api.NEW_AXIS:
                return batch.value
            return None
        if feed and isinstance(batch, (cst.List, cst.Tuple)) and len(batch.elements) == 1 \
                and not isinstance(batch.elements[0], cst.StarredElement):
            return batch.elements[0].value
        if not isinstance(batch, cst.Call) or not batch.args:
            return None
        name = self._name(batch.func)
        first = batch.args[0].value
        if name in api.EXPAND_DIMS:
            axis = argument(batch, 1, "axis")
            return first if isinstance(axis, cst.Integer) and axis.evaluated_value == 0 else None
        if name in api.ARRAYS_FROM_LISTS and isinstance(first, (cst.List, cst.Tuple)) and len(first.elements) == 1 \
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
        if isinstance(node, cst.BinaryOperation):
            return self.is_row(node.left, depth + 1) or self.is_row(node.right, depth + 1)
        if isinstance(node, cst.Call):
            func = node.func
            if self._name(func) in api.ROW_CONVERSIONS and node.args:
                return self.is_row(node.args[0].value, depth + 1)
            if isinstance(func, cst.Attribute) and func.attr.value in api.ROW_METHODS and self._name(func) is None:
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
