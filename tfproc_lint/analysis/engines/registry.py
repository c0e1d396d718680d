"""The engines the linter knows: one `core.Engine` each, made at the end of its module (ray.py,
dask.py, spark.py) from its knowledge (knowledge/engines.py: name, noun, remedies) and its analysis
hooks. tests/test_engine_registry.py checks that every engine module's ENGINE is listed here.
"""

from __future__ import annotations

from tfproc_lint.analysis.engines import dask, ray, spark

ENGINES = (ray.ENGINE, dask.ENGINE, spark.ENGINE)
BY_NAME = {engine.name: engine for engine in ENGINES}

ENGINE_NOUNS = {engine.name: engine.noun for engine in ENGINES}
REMEDIES = {engine.name: engine.remedy for engine in ENGINES}
PER_WORKER_RECIPES = {engine.name: engine.per_worker_recipe for engine in ENGINES}
ROUTES = tuple(engine.routes for engine in ENGINES)
TASK_DECORATORS = frozenset().union(*(engine.task_decorators for engine in ENGINES))
OBJECT_NOUNS = {kind: noun for engine in ENGINES for kind, noun in engine.object_nouns.items()}
