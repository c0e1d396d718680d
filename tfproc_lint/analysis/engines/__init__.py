"""Distributed engines as process boundaries: Ray tasks and actors, Dask clients and collections,
Spark RDDs, DataFrames and UDFs, one module each (ray.py, dask.py, spark.py, listed in
registry.py), each a `core.Engine`; EngineRoutes (routes.py) finds their crossings, core.py and tasks.py
hold what every engine shares. The knowledge is data in knowledge/engines.py (names, task grains,
remedies); the rules word the engine's own fix.

The rules read the engines through the names below (`engines.is_engine(crossing)`).
"""

from tfproc_lint.analysis.engines.core import (code_reached, engine, is_engine, is_script, many_tasks,
                                               returns_state, task_worker)
from tfproc_lint.analysis.engines.dask import (BOUND_MODEL_PER_TASK, bound_model_per_task, dask_pickles,
                                               dask_process_clusters, names_dask_scheduler_address,
                                               returned_keras_models)
from tfproc_lint.analysis.engines.ray import functions_of, is_function, ray_remotes
from tfproc_lint.analysis.engines.registry import BY_NAME, ENGINE_NOUNS, ENGINES, PER_WORKER_RECIPES, REMEDIES
from tfproc_lint.analysis.engines.routes import EngineRoutes
from tfproc_lint.analysis.engines.spark import (spark_executor_memory_limit, spark_task_functions,
                                                spark_task_gpu_share)
from tfproc_lint.analysis.engines.tasks import (EngineSentState, captured_globals, crossing_failure,
                                                fresh_process_functions, sent_state, traced_before, worker_functions)

__all__ = [
    "BOUND_MODEL_PER_TASK", "BY_NAME", "ENGINES", "ENGINE_NOUNS", "PER_WORKER_RECIPES", "REMEDIES", "EngineRoutes",
    "EngineSentState",
    "bound_model_per_task", "captured_globals", "code_reached", "crossing_failure", "dask_pickles",
    "dask_process_clusters", "engine", "fresh_process_functions", "functions_of", "is_engine", "is_function",
    "is_script", "many_tasks", "names_dask_scheduler_address", "ray_remotes", "returned_keras_models",
    "returns_state", "sent_state", "spark_executor_memory_limit", "spark_task_functions",
    "spark_task_gpu_share", "task_worker", "traced_before", "worker_functions",
]
