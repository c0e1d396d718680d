"""The engines the linter knows, one module each. A module of this tuple provides:

- NAME ("ray"), NOUN ("Ray"), REMEDY (how to send TF state instead) and PER_WORKER_RECIPE (how to
  load once per worker: TFP301), TASK_DECORATORS (qualified names of decorators whose function runs
  in the engine's workers) and OBJECT_NOUNS (its object types, as api.ENGINE_FACTORIES names them
  with the engine's name first, -> the noun of a route label);
- ROUTES: a mixin class of EngineRoutes with the engine's own route methods (prefixed with the
  engine's name, or private to it, so that the mixins never clash);
- call_crossings(routes, site, name): the crossings of a call the engine makes by name, not as a
  method of one of its objects (a list, maybe empty), or None when the call is not the engine's;
- task_method(routes, crossing, receiver, method, task): a method of its objects that runs a
  function (api.ENGINE_TASK_METHODS), given the crossing made for it: the crossing, or None when
  there is none;
- pickles(analysis, crossing) and model_failure(crossing): whether what it sends is pickled, and
  what happens to a Keras model it sends (None: it arrives);
- declared_tasks(analysis): functions that run in its workers by declaration, beyond the callables
  of its crossings.

tests/test_engine_registry.py checks that each module has all of these.
"""

from __future__ import annotations

from tfproc_lint.analysis.engines import dask, ray, spark

ENGINES = (ray, dask, spark)
BY_NAME = {module.NAME: module for module in ENGINES}

ENGINE_NOUNS = {module.NAME: module.NOUN for module in ENGINES}
REMEDIES = {module.NAME: module.REMEDY for module in ENGINES}
PER_WORKER_RECIPES = {module.NAME: module.PER_WORKER_RECIPE for module in ENGINES}
ROUTES = tuple(module.ROUTES for module in ENGINES)
TASK_DECORATORS = frozenset().union(*(module.TASK_DECORATORS for module in ENGINES))
OBJECT_NOUNS = {kind: noun for module in ENGINES for kind, noun in module.OBJECT_NOUNS.items()}
