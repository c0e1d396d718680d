"""GPU memory in engine workers (TFP401), each finding a typed fact: Ray tasks or actors that ask
for a share of one GPU (`num_gpus=0.5`) and Spark tasks run several to a GPU
(`spark.task.resource.gpu.amount` below 1), each running TensorFlow with no memory limit in its own
code; TF1 sessions made in engine tasks with no GPU memory option; Ray tasks or actors that ask for
no GPU next to ones that ask for GPUs (Ray 2.60 leaves the node's CUDA_VISIBLE_DEVICES to zero-GPU
workers: shared/runtime-facts.md §7); local Dask clusters whose workers all advertise a GPU. For
the last three, any memory limit in the file, any mention of the variables that hide GPUs,
silences them: prefer a miss."""

from __future__ import annotations


import libcst as cst

from tfproc_lint.records import record

from tfproc_lint.analysis import engines, gpu_shares
from tfproc_lint.analysis.answers import per_file
from tfproc_lint.analysis.engines.spark import SparkSetting
from tfproc_lint.analysis.kinds import Kind
from tfproc_lint.analysis.settings import memory_limits
from tfproc_lint.analysis.symbols import ClassInfo, FunctionInfo
from tfproc_lint.analysis.values import keyword
from tfproc_lint.analysis.walk import iter_tree
from tfproc_lint.knowledge import engines as engine_knowledge
from tfproc_lint.knowledge import environment, tensorflow


@record
class RayGpuShare:
    """A Ray task or actor that asks for a share of one GPU and runs TensorFlow unlimited."""

    info: FunctionInfo | ClassInfo
    gpus: cst.BaseExpression  # the `num_gpus` value as written
    value: float  # what it resolves to, between 0 and 1


def ray_gpu_shares(analysis) -> list[RayGpuShare]:
    """`@ray.remote(num_gpus=0.5)` (or `.options(num_gpus=0.5)`, or a constant, variable or config
    attribute bound once to 0.5) on a task or actor that runs TensorFlow with no memory limit in its own code:
    Ray packs several onto one GPU, and the first to start maps nearly all of its memory."""
    shares = [(info, keyword(decorator, "num_gpus"), info.scope.parent)
              for info, decorator in engines.ray_remotes(analysis)]
    shares += [(c.owner.task.function, c.owner.task.num_gpus, c.site.scope) for c in analysis.crossings
               if engines.is_engine(c) and c.owner.task.num_gpus is not None]
    if not shares:
        return []
    limits = memory_limits(analysis)
    if any(limit.environment for limit in limits):
        return []  # an environment variable may reach Ray's workers (prefer a miss)
    found = []
    seen = set()
    for info, gpus, scope in shares:
        value = gpu_shares.share(analysis, gpus, scope)
        if info in seen or value is None:
            continue
        seen.add(info)
        functions = engines.functions_of(analysis, info)
        if not any(analysis.tf.function_runs(function) for function in functions):
            continue
        reached = engines.code_reached(analysis, functions)
        if any(limit.anchor in reached for limit in limits):
            continue
        found.append(RayGpuShare(info, gpus, value))
    return found


@record
class SparkGpuShare:
    """`spark.task.resource.gpu.amount` below 1, and a task function that runs TensorFlow unlimited."""

    setting: SparkSetting
    value: float
    function: FunctionInfo  # the first such task function given to Spark where the setting is made


def spark_gpu_share(analysis) -> SparkGpuShare | None:
    """`spark.task.resource.gpu.amount` below 1 (several tasks on one GPU) and a Spark task
    function, given to Spark where the setting is made, that runs TensorFlow with no memory
    limit in its own code (nor at import, nor in the executors' environment)."""
    found = engines.spark_task_gpu_share(analysis)
    if found is None or engines.spark_executor_memory_limit(analysis):
        return None
    setting, value = found
    limits = memory_limits(analysis)
    walk = analysis.execution
    if any(limit.environment or walk.runs_on_import(limit.anchor) for limit in limits):
        return None  # may reach Spark's Python workers (prefer a miss)
    for function in sorted(engines.spark_task_functions(analysis, setting.call), key=lambda f: f.order):
        if not analysis.tf.function_runs(function):
            continue
        reached = engines.code_reached(analysis, [function])
        if any(limit.anchor in reached for limit in limits):
            continue
        return SparkGpuShare(setting, value, function)
    return None


@per_file
def real_limits(analysis) -> list:
    """memory_limits, less TF1 options set to False (`GPUOptions(allow_growth=False)`, an empty
    `GPUOptions()`, `config.gpu_options.allow_growth = False`)."""
    return [limit for limit in memory_limits(analysis) if _limits(analysis, limit.anchor)]


def _limits(analysis, anchor) -> bool:
    if isinstance(anchor, cst.Assign):
        return not _false(anchor.value)
    if isinstance(anchor, cst.Call):
        options = [arg for arg in anchor.args if arg.keyword is not None
                   and arg.keyword.value in tensorflow.GPU_MEMORY_OPTIONS]
        if analysis.name_of(anchor.func) in tensorflow.TF1_GPU_OPTIONS or options:
            return any(not _false(arg.value) for arg in options)
    return True


def _false(node) -> bool:
    return (isinstance(node, cst.Name) and node.value == "False") or (
        isinstance(node, (cst.Integer, cst.Float)) and not node.evaluated_value)


@per_file
def _hides_gpus_somewhere(analysis) -> bool:
    """A string naming CUDA_VISIBLE_DEVICES or Ray's override anywhere (a runtime_env, a launcher),
    docstrings aside."""
    for node in iter_tree(analysis.module):
        if isinstance(node, cst.SimpleString) and isinstance(node.evaluated_value, str) \
                and any(name in node.evaluated_value for name in environment.GPU_HIDING_VARIABLES):
            parents = analysis.ancestors(node)
            if not (parents and isinstance(parents[0], cst.Expr)):
                return True
    return False


@record
class SessionTask:
    function: FunctionInfo  # an engine task function (or a Ray actor's method)
    session: cst.Call  # the TF1 Session it makes with no GPU memory option


def session_tasks(analysis) -> list[SessionTask]:
    """Each engine task function (a Spark or Dask task, a Ray task or actor method with no
    `num_gpus`) that makes a TF1 Session, with the first it makes, in a file with no GPU memory
    limit at all."""
    if not analysis.engine_routes.active or real_limits(analysis) or _hides_gpus_somewhere(analysis):
        return []
    if any(isinstance(node, cst.Arg) and node.keyword is not None and node.keyword.value == tensorflow.TF1_DEVICE_COUNT
           for node in iter_tree(analysis.module)):
        return []  # `ConfigProto(device_count={"GPU": 0})`: a session may see no GPU
    asked = {info for info, _, _ in _ray_gpu_asks(analysis)}
    found = []
    for function in sorted(engines.worker_functions(analysis), key=lambda f: f.order):
        if function in asked or function.class_info in asked:
            continue  # num_gpus given: a GPU of its own, or a share (reported as such)
        for node in engines.code_reached(analysis, [function]):
            if isinstance(node, cst.Call) and _makes_session(analysis, node):
                found.append(SessionTask(function, node))
                break
    return found


def _makes_session(analysis, call: cst.Call) -> bool:
    return tensorflow.STATE_CONSTRUCTORS.get(analysis.name_of(call.func) or "") is Kind.SESSION


@record
class ZeroGpuWorker:
    info: FunctionInfo | ClassInfo
    gpu_info: FunctionInfo | ClassInfo  # a task or actor of the same file that asks for GPUs
    gpus: cst.BaseExpression


def ray_zero_gpu_workers(analysis) -> list[ZeroGpuWorker]:
    """Ray tasks and actors that ask for no GPU (no `num_gpus`, or 0) and run TensorFlow, in a file
    whose other tasks or actors ask for GPUs (so the cluster has GPU nodes), with no GPU memory limit
    and nothing hiding the GPUs anywhere in the file."""
    routes = analysis.engine_routes
    if not routes.active:
        return []
    asks = _ray_gpu_asks(analysis)
    positive = [(info, node) for info, node, scope in asks if (gpu_shares.number(analysis, node, scope) or 0) > 0]
    if not positive or real_limits(analysis) or _hides_gpus_somewhere(analysis):
        return []
    asked = {info for info, _, _ in asks}
    found = []
    for info in [*analysis.symbols.functions.values(), *analysis.symbols.classes.values()]:
        if info in asked or routes.ray_remote_options(info) is False:
            continue
        if isinstance(info, FunctionInfo) and info.class_info is not None:
            continue  # a method: its class is the actor
        if any(analysis.tf.function_runs(function) for function in engines.functions_of(analysis, info)):
            found.append(ZeroGpuWorker(info, positive[0][0], positive[0][1]))
    return found


@per_file
def _ray_gpu_asks(analysis) -> list[tuple[FunctionInfo | ClassInfo, cst.BaseExpression, object]]:
    """Ray tasks and actors given a `num_gpus` (in the decorator or in `.options(...)`), with it and
    the scope it resolves in; `num_gpus=0` written out counts as no GPU."""
    asks = [(info, keyword(decorator, engine_knowledge.RAY_GPU_OPTION), _scope(info))
            for info, decorator in engines.ray_remotes(analysis)]
    asks += [(c.owner.task.function, c.owner.task.num_gpus, c.site.scope) for c in analysis.crossings
             if engines.is_engine(c) and c.owner.task.num_gpus is not None and c.owner.task.function]
    return [(info, node, scope) for info, node, scope in asks if node is not None and not _false(node)]


def _scope(info):
    return info.scope.parent if isinstance(info, FunctionInfo) else info.outer


@record
class DaskGpuCluster:
    cluster: cst.Call  # LocalCluster(...) or Client(...) that makes one
    workers: int
    task: FunctionInfo  # a Dask task function of the file that runs TensorFlow


def dask_gpu_clusters(analysis) -> list[DaskGpuCluster]:
    """A local Dask cluster of several worker processes (`n_workers=` a literal of 2 or more) that
    each advertise a GPU (`resources={"GPU": ...}`), in a file whose Dask tasks run TensorFlow, with no
    GPU memory limit and nothing hiding the GPUs anywhere: LocalCluster gives every worker the same
    GPUs, so each worker's TensorFlow maps nearly all their memory."""
    if not analysis.engine_routes.active or real_limits(analysis) or _hides_gpus_somewhere(analysis):
        return []
    tasks = []
    for crossing in analysis.crossings:
        if engines.is_engine(crossing) and engines.engine(crossing) == "dask" and crossing.callable is not None:
            function = engines.task_worker(analysis, crossing).function
            if function is not None and function not in tasks and analysis.tf.function_runs(function):
                tasks.append(function)
    if not tasks:
        return []
    found = []
    for call in engines.dask_process_clusters(analysis):
        workers = keyword(call, engine_knowledge.DASK_WORKER_COUNT)
        resources = keyword(call, engine_knowledge.DASK_RESOURCES)
        if not (isinstance(workers, cst.Integer) and workers.evaluated_value >= 2 and isinstance(resources, cst.Dict)):
            continue
        if any(isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)
               and e.key.evaluated_value == engine_knowledge.DASK_GPU_RESOURCE for e in resources.elements):
            found.append(DaskGpuCluster(call, workers.evaluated_value, tasks[0]))
    return found
