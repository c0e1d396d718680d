"""The engine registry (tfproc_lint/analysis/engines/registry.py): exactly Ray, Dask and Spark, each
a `core.Engine` made in its own module with hooks of the dispatcher's signatures, so that a fourth
engine is one new module plus its entry."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

from tfproc_lint import records
from tfproc_lint.analysis import engines
from tfproc_lint.analysis.engines import registry
from tfproc_lint.analysis.engines.core import Engine
from tfproc_lint.analysis.engines.routes import EngineRoutes
from tfproc_lint.knowledge import engines as knowledge

# hook -> the parameters the dispatcher passes.
HOOKS = {
    "call_crossings": ("routes", "site", "name"),
    "task_method": ("routes", "crossing", "receiver", "method", "task"),
    "pickles": ("analysis", "crossing"),
    "model_failure": ("crossing",),
    "declared_tasks": ("analysis",),
}
NAMES = ("ray", "dask", "spark")


def wrong_hooks(engine: Engine) -> list[str]:
    """The hooks of the engine that the dispatcher could not call."""
    return [hook for hook, parameters in HOOKS.items()
            if not callable(getattr(engine, hook)) or tuple(inspect.signature(getattr(engine, hook)).parameters)
            != parameters]


def test_the_registry_lists_exactly_ray_dask_and_spark() -> None:
    assert sorted(engine.name for engine in registry.ENGINES) == sorted(NAMES)
    assert all(isinstance(engine, Engine) for engine in registry.ENGINES)
    assert [engine.routes.__module__ for engine in registry.ENGINES] == [
        f"tfproc_lint.analysis.engines.{engine.name}" for engine in registry.ENGINES]
    assert engines.ENGINES is registry.ENGINES


@pytest.mark.parametrize("engine", registry.ENGINES, ids=lambda engine: engine.name)
def test_each_engine_has_the_interface(engine) -> None:
    assert wrong_hooks(engine) == []
    assert engine.facts is knowledge.ENGINE_FACTS[engine.name]
    assert all(kind.startswith(f"{engine.name}.") for kind in engine.object_nouns)
    assert engine.routes in EngineRoutes.__mro__


def test_a_hook_of_another_form_is_caught() -> None:
    stripped = records.replace(engines.ENGINES[0], model_failure=lambda analysis, crossing: None)
    assert wrong_hooks(stripped) == ["model_failure"]


def test_every_engine_module_of_the_package_is_registered() -> None:
    """A module of the package that makes an Engine has it in the tuple."""
    found = []
    for info in pkgutil.iter_modules(engines.__path__):
        module = importlib.import_module(f"{engines.__name__}.{info.name}")
        found += [value for value in vars(module).values() if isinstance(value, Engine)]
    assert sorted(found, key=id) == sorted(registry.ENGINES, key=id)


def test_the_route_mixins_do_not_hide_each_others_methods() -> None:
    plain = {*vars(object), "__dict__", "__weakref__", "__module__", "__qualname__", "__doc__"}
    members = [set(vars(engine.routes)) - plain for engine in registry.ENGINES]
    for i, first in enumerate(members):
        for second in members[i + 1:]:
            assert not first & second


def test_the_engine_knowledge_names_registered_engines_only() -> None:
    """Every engine object type, error wording, package and remedy of the knowledge belongs to a
    registered engine, so the dispatcher finds an engine for each."""
    names = set(registry.BY_NAME)
    types_ = {*knowledge.ENGINE_FACTORIES.values(), *(kind for kind, _ in knowledge.ENGINE_SENDS),
              *(kind for kind, _ in knowledge.ENGINE_TASK_METHODS)}
    assert {kind.split(".")[0] for kind in types_} <= names
    assert set(knowledge.ENGINE_PACKAGES.values()) == names
    assert set(knowledge.ENGINE_SERIALIZATION_ERRORS) == set(knowledge.ENGINE_CAPTURE_ERRORS) == names
    assert set(knowledge.ENGINE_FACTS) == set(knowledge.ENGINES) == names
