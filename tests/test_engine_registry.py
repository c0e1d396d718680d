"""The engine registry (tfproc_lint/analysis/engines/registry.py): exactly Ray, Dask and Spark,
each a module with the same interface, so that a fourth engine is one new module plus its entry."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import types

import pytest

from tfproc_lint.analysis import engines
from tfproc_lint.analysis.engines import registry
from tfproc_lint.analysis.engines.routes import EngineRoutes
from tfproc_lint.knowledge import engines as knowledge

# member -> what it must be, and for functions the parameters the dispatcher passes.
INTERFACE = {
    "NAME": str, "NOUN": str, "REMEDY": str, "PER_WORKER_RECIPE": str, "TASK_DECORATORS": frozenset,
    "OBJECT_NOUNS": dict, "ROUTES": type,
    "call_crossings": ("routes", "site", "name"),
    "task_method": ("routes", "crossing", "receiver", "method", "task"),
    "pickles": ("analysis", "crossing"),
    "model_failure": ("crossing",),
    "declared_tasks": ("analysis",),
}
NAMES = ("ray", "dask", "spark")


def missing_members(module) -> list[str]:
    """The members of INTERFACE the module lacks or has in another form."""
    missing = []
    for member, form in INTERFACE.items():
        value = getattr(module, member, None)
        if isinstance(form, tuple):
            if not callable(value) or tuple(inspect.signature(value).parameters) != form:
                missing.append(member)
        elif not isinstance(value, form):
            missing.append(member)
    return missing


def test_the_registry_lists_exactly_ray_dask_and_spark() -> None:
    assert sorted(module.NAME for module in registry.ENGINES) == sorted(NAMES)
    assert [module.__name__ for module in registry.ENGINES] == [
        f"tfproc_lint.analysis.engines.{module.NAME}" for module in registry.ENGINES]
    assert engines.ENGINES is registry.ENGINES


@pytest.mark.parametrize("module", registry.ENGINES, ids=lambda module: module.NAME)
def test_each_engine_module_has_the_interface(module) -> None:
    assert missing_members(module) == []
    assert all(kind.startswith(f"{module.NAME}.") for kind in module.OBJECT_NOUNS)
    assert module.ROUTES in EngineRoutes.__mro__


def test_a_module_lacking_a_member_is_caught() -> None:
    stripped = types.ModuleType("stripped")
    stripped.__dict__.update({k: v for k, v in vars(engines.ray).items() if k != "model_failure"})
    assert missing_members(stripped) == ["model_failure"]


def test_every_engine_module_of_the_package_is_registered() -> None:
    """A module of the package that defines an engine's NAME is in the tuple."""
    found = set()
    for info in pkgutil.iter_modules(engines.__path__):
        module = importlib.import_module(f"{engines.__name__}.{info.name}")
        if isinstance(getattr(module, "NAME", None), str):
            found.add(module)
    assert found == set(registry.ENGINES)


def test_the_route_mixins_do_not_hide_each_others_methods() -> None:
    plain = {*vars(object), "__dict__", "__weakref__", "__module__", "__qualname__", "__doc__"}
    members = [set(vars(module.ROUTES)) - plain for module in registry.ENGINES]
    for i, first in enumerate(members):
        for second in members[i + 1:]:
            assert not first & second


def test_the_engine_knowledge_names_registered_engines_only() -> None:
    """Every engine object type, error wording and package in api.py belongs to a registered engine,
    so the dispatcher finds a module for each."""
    names = set(registry.BY_NAME)
    types_ = {*knowledge.ENGINE_FACTORIES.values(), *(kind for kind, _ in knowledge.ENGINE_SENDS),
              *(kind for kind, _ in knowledge.ENGINE_TASK_METHODS)}
    assert {kind.split(".")[0] for kind in types_} <= names
    assert set(knowledge.ENGINE_PACKAGES.values()) == names
    assert set(knowledge.ENGINE_SERIALIZATION_ERRORS) == set(knowledge.ENGINE_CAPTURE_ERRORS) == names
