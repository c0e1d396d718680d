"""Spark: row UDFs, pandas UDFs (iterator ones run once per partition), `predict_batch_udf`,
`spark.udf.register`, and the methods of RDDs and DataFrames that run a function or broadcast a
value (knowledge.ENGINE_SENDS, knowledge.ENGINE_TASK_METHODS); also the GPU settings of a SparkSession builder
or a SparkConf (TFP401). The knowledge is data in knowledge/engines.py.
"""

from __future__ import annotations

from functools import cached_property

import libcst as cst

from tfproc_lint.analysis import engine_objects, gpu_shares
from tfproc_lint.analysis.engines.core import Engine, engine, is_engine, owner, route, task_worker
from tfproc_lint.analysis.kinds import Kind
from tfproc_lint.analysis.routes import Crossing, Pickling
from tfproc_lint.analysis.symbols import CallSite, FunctionInfo, Scope
from tfproc_lint.analysis.values import TaskCall, argument
from tfproc_lint.knowledge import engines as knowledge
from tfproc_lint.knowledge import environment
from tfproc_lint.knowledge.engines import TaskGrain
from tfproc_lint.records import record

# The engine's hooks (core.Engine; ENGINE at the end) -------------------------------------------------
_UDFS = knowledge.SPARK_ROW_UDFS | knowledge.SPARK_PANDAS_UDFS


def call_crossings(routes, site: CallSite, name: str | None) -> list[Crossing] | None:
    """`udf(f)`, `pandas_udf(f)`, the decorator calls `@udf(...)`, `udf(DoubleType())(f)` and
    `predict_batch_udf(make_predict_fn)`; None when the call is none of these."""
    call = site.node
    func = call.func
    if name in _UDFS:
        crossing = routes._spark_udf(site, name)
        return [crossing] if crossing else []
    if name in knowledge.SPARK_PREDICT_BATCH_UDFS and call.args:  # make_predict_fn: once per worker
        crossing = Crossing(route("predict_batch_udf"), call, site,
                            owner("spark", call, TaskGrain.PER_WORKER, TaskCall.UDF), Pickling.ALWAYS)
        crossing.callable, crossing.callable_scope = call.args[0].value, site.scope
        return [crossing]
    if isinstance(func, cst.Call) and func.args:
        inner = engine_objects.engine_name(routes, func.func, site.scope, site.order)
        if inner in _UDFS and call.args:  # udf(DoubleType())(f)
            crossing = routes._spark_udf(site, inner, func, call.args[0].value)
            return [crossing] if crossing else []
    return None


def task_method(routes, crossing: Crossing, receiver: str, method: str, task: cst.Arg) -> Crossing | None:
    """`spark.udf.register("f", g)` runs a wrapped UDF as its wrapper says: no crossing of its own."""
    if (receiver, method) in knowledge.SPARK_UDF_REGISTRATIONS \
            and routes._registers_wrapped_udf(crossing.callable, crossing.site):
        return None
    return crossing


# Routes (a mixin of EngineRoutes) -------------------------------------------------------------------
class SparkRoutes:
    @cached_property
    def _decorated_udfs(self) -> dict[cst.Call, FunctionInfo]:
        """`@udf("double")` / `@pandas_udf("double")` decorator calls -> the function they wrap."""
        found = {}
        for info in self.symbols.functions.values():
            for decorator in info.node.decorators:
                if isinstance(decorator.decorator, cst.Call):
                    found[decorator.decorator] = info
        return found

    @cached_property
    def _called_calls(self) -> set[int]:
        """Calls whose result is called at once: `pandas_udf(DoubleType())` in `pandas_udf(...)(f)`."""
        return {id(site.node.func) for site in self.symbols.calls if isinstance(site.node.func, cst.Call)}

    def _returns_curried(self, call: cst.Call) -> bool:
        return id(call) in self._called_calls

    def _registers_wrapped_udf(self, node, site: CallSite) -> bool:
        """`spark.udf.register("f", g)` where `g` is not a plain function of this module (a
        `@udf` / `@pandas_udf` function, a `udf(...)` object): it runs as that wrapper says."""
        if isinstance(node, cst.Lambda):
            return False
        info = self.function_named(node, site.scope, site.order)
        return info is None or self.wraps_as_task(info)

    def _spark_udf(self, site: CallSite, name: str, options: cst.Call | None = None,
                   wrapped: cst.BaseExpression | None = None) -> Crossing | None:
        """`udf(f, "double")`, `pandas_udf(f, "double")`, the decorator call `@udf("double")`, or
        `options`, a `udf(returnType)` call, applied to `wrapped`: `udf(DoubleType())(f)`."""
        call = site.node
        decorated = self._decorated_udfs.get(call) if options is None else None
        candidate = wrapped if options is not None else call.args[0].value if call.args else None
        if decorated is not None:
            function_node, info = decorated.node.name, decorated
            scope = decorated.scope.parent or site.scope
        elif isinstance(candidate, (cst.Name, cst.Attribute, cst.Lambda)):
            function_node, scope = candidate, site.scope
            value = self.classifier.classify(function_node, scope, site.order)
            if value.kind is not Kind.FUNCTION and not isinstance(candidate, cst.Lambda) \
                    and self._returns_curried(call):
                return None  # `pandas_udf(return_type)`: its result is called with the function
            info = value.info if value.kind is Kind.FUNCTION else None
        else:
            return None
        if name in knowledge.SPARK_ROW_UDFS:
            grain, label = TaskGrain.PER_ROW, "a Spark udf"
        else:
            iterator = (info is not None and self._takes_iterator(info)) \
                or self._iterator_type(options if options is not None else call, site)
            grain, label = ((TaskGrain.PER_PARTITION, "an iterator pandas_udf") if iterator
                            else (TaskGrain.PER_BATCH, "a pandas_udf"))
        crossing = Crossing(route(label), call, site, owner("spark", call, grain, TaskCall.UDF, function=info),
                            Pickling.ALWAYS)
        crossing.callable, crossing.callable_scope = function_node, scope
        return crossing

    def _iterator_type(self, call: cst.Call, site: CallSite) -> bool:
        """The pre-Spark-3 spelling: `pandas_udf(..., PandasUDFType.SCALAR_ITER)` (or MAP_ITER)."""
        for arg in call.args:
            name = self.classifier.qualified_name(arg.value, site.scope, site.order) or ""
            if name.startswith(knowledge.SPARK_PANDAS_UDF_TYPES) and name.endswith(knowledge.SPARK_ITERATOR_UDF_TYPES):
                return True
        return False

    def _takes_iterator(self, info: FunctionInfo) -> bool:
        """The first parameter is annotated `Iterator[...]` (pandas_udf's iterator form)."""
        params = info.node.params.params
        if not params or params[0].annotation is None:
            return False
        annotation = params[0].annotation.annotation
        if isinstance(annotation, cst.Subscript):
            annotation = annotation.value
        scope = info.scope.parent or info.scope
        return self.classifier.qualified_name(annotation, scope, info.order) in knowledge.ITERATOR_TYPES


# What the rules ask ---------------------------------------------------------------------------------
def spark_task_functions(analysis, near: cst.CSTNode) -> set[FunctionInfo]:
    """Functions of this module that Spark runs as tasks (partition functions, UDFs), given to
    Spark in the function (or module code) that holds `near`; a decorated UDF where it is defined."""
    found = set()
    where = analysis.enclosing_function_node(near)
    for crossing in analysis.crossings:
        if not is_engine(crossing) or engine(crossing) != "spark" or crossing.callable is None:
            continue
        worker = task_worker(analysis, crossing)
        if worker.function is None:
            continue
        made = analysis.enclosing_function_node(crossing.call)
        if made is worker.function.node:  # `@pandas_udf(...)`: the decorator sits on the function
            made = analysis.enclosing_function_node(made)
        if made is where:
            found.add(worker.function)
    return found


# GPU scheduling (TFP401; shares of one GPU are read by analysis/gpu_shares.py) ------------------------
@record
class SparkSetting:
    call: cst.Call  # `.config(key, value)` or `.set(key, value)`
    key: str
    value: cst.BaseExpression
    scope: Scope


def spark_settings(analysis) -> list[SparkSetting]:
    """Literal-keyed settings on a SparkSession builder or a SparkConf."""
    routes = analysis.engine_routes
    if not routes.active:
        return []
    found = []
    for site in analysis.symbols.calls:
        func = site.node.func
        if not isinstance(func, cst.Attribute):
            continue
        kind = routes.object_type(func.value, site.scope, site.order)
        if (kind, func.attr.value) not in knowledge.SPARK_CONFIG_SETTERS:
            continue
        key, value = argument(site.node, 0, "key"), argument(site.node, 1, "value")
        if isinstance(key, cst.SimpleString) and isinstance(key.evaluated_value, str) and value is not None:
            found.append(SparkSetting(site.node, key.evaluated_value, value, site.scope))
    return found


def spark_task_gpu_share(analysis) -> tuple[SparkSetting, float] | None:
    """The first `spark.task.resource.gpu.amount` below 1, with its value."""
    for setting in spark_settings(analysis):
        if setting.key == knowledge.SPARK_TASK_GPU_AMOUNT:
            value = gpu_shares.share(analysis, setting.value, setting.scope)
            if value is not None:
                return setting, value
    return None


def spark_executor_memory_limit(analysis) -> bool:
    """`spark.executorEnv.TF_FORCE_GPU_ALLOW_GROWTH` (or another GPU memory variable) is set."""
    prefix = knowledge.SPARK_EXECUTOR_ENVIRONMENT
    return any(s.key.startswith(prefix) and s.key[len(prefix):] in environment.GPU_MEMORY_ENVIRONMENT
               for s in spark_settings(analysis))


# Everything is pickled, a Keras model travels to Spark's executors, and a decorated UDF is a crossing
# where it is defined: no task declared beyond the crossings.
ENGINE = Engine(knowledge.SPARK, task_decorators=_UDFS,
                object_nouns={"spark.rdd": "rdd", "spark.dataframe": "DataFrame", "spark.context": "SparkContext"},
                routes=SparkRoutes, call_crossings=call_crossings, task_method=task_method)
