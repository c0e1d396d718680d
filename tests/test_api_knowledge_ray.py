"""The Ray Train, Ray Serve and Spark SQL knowledge in tfproc_lint/knowledge/ (issue 30, class 5) against the
installed libraries, as tests/test_api_knowledge.py does for the rest. Ray 2.60's `ray.train`
wants pydantic for its v2 API and `ray.serve` wants starlette and fastapi: where those are missing,
Ray Train is imported with its v1 API (RAY_TRAIN_V2_ENABLED=0) and Ray Serve is read from its
source files, which is enough to check names."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import sys
from pathlib import Path

import pytest

from tfproc_lint.knowledge import engines as knowledge
from tfproc_lint.knowledge import tensorflow

pytestmark = pytest.mark.tensorflow


def _ray_train_tensorflow(monkeypatch):
    if importlib.util.find_spec("ray") is None:
        pytest.skip("ray is not installed")
    pytest.importorskip("tensorflow", reason="ray.train.tensorflow imports TensorFlow")
    if "ray.train" not in sys.modules and importlib.util.find_spec("pydantic") is None:
        monkeypatch.setenv("RAY_TRAIN_V2_ENABLED", "0")
    try:
        return importlib.import_module("ray.train.tensorflow")
    except ImportError as error:  # a dependency of ray[train] missing
        pytest.skip(f"ray.train.tensorflow does not import: {error}")


def _ray_source(relative: str) -> ast.Module:
    spec = importlib.util.find_spec("ray")
    if spec is None or spec.origin is None:
        pytest.skip("ray is not installed")
    path = Path(spec.origin).parent / relative
    if not path.exists():
        pytest.skip(f"ray has no {relative}")
    return ast.parse(path.read_text(encoding="utf-8"))


def test_tensorflow_checkpoint_makers_and_model_loads_exist(monkeypatch) -> None:
    module = _ray_train_tensorflow(monkeypatch)
    for name in knowledge.RAY_TF_CHECKPOINT_CLASSES:
        path, _, attribute = name.rpartition(".")
        cls = getattr(importlib.import_module(path), attribute)
        assert cls is module.TensorflowCheckpoint, name
        for member in knowledge.RAY_TF_CHECKPOINT_MAKERS | knowledge.RAY_TF_CHECKPOINT_MODEL_LOADS:
            assert callable(getattr(cls, member, None)), f"{name}.{member}"
    # get_model loads the model: it calls keras' load_model on the checkpoint's file
    assert "load_model" in inspect.getsource(module.TensorflowCheckpoint.get_model)


def test_the_air_predictor_is_gone_from_the_installed_ray(monkeypatch) -> None:
    """tensorflow.REMOVED_NAMES says so: the analysis still knows it, for code written for older Ray 2."""
    module = _ray_train_tensorflow(monkeypatch)
    predictors = [name for name in tensorflow.STATE_CONSTRUCTORS if name.startswith("ray.")]
    assert predictors and set(predictors) <= tensorflow.REMOVED_NAMES
    for name in predictors:
        assert not hasattr(module, name.split(".")[3]), name


def test_serve_deployment_and_multiplexed_are_public() -> None:
    tree = _ray_source("serve/__init__.py")
    exported = next(ast.literal_eval(node.value) for node in tree.body if isinstance(node, ast.Assign)
                    and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets))
    for name in knowledge.RAY_SERVE_DEPLOYMENTS | knowledge.RAY_SERVE_CACHED:
        assert name.startswith("ray.serve.") and name.rpartition(".")[2] in exported, name


def test_serve_once_methods_are_serves_own_hooks() -> None:
    """Serve calls these by name (its constants), not per request; __init__ and __del__ are Python's."""
    tree = _ray_source("serve/_private/constants.py")
    hooks = {node.value.value for node in tree.body if isinstance(node, ast.Assign)
             and isinstance(node.value, ast.Constant) and isinstance(node.targets[0], ast.Name)
             and node.targets[0].id in ("HEALTH_CHECK_METHOD", "RECONFIGURE_METHOD")}
    assert knowledge.RAY_SERVE_ONCE_METHODS - {"__init__", "__del__"} == hooks


def test_spark_udf_registration_takes_the_function_second() -> None:
    pytest.importorskip("pyspark")
    from pyspark.sql.udf import UDFRegistration

    for kind, method in knowledge.SPARK_UDF_REGISTRATIONS:
        index, _ = knowledge.ENGINE_TASK_METHODS[(kind, method)]
        parameters = list(inspect.signature(getattr(UDFRegistration, method)).parameters)[1:]  # self
        assert parameters[index] == "f", (kind, method)
