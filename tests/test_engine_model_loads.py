"""Issue 30, class 5: models loaded per task through engine APIs (TFP301): Ray Train checkpoints
and AIR predictors in `map_batches`, Ray Serve request handlers, `spark.udf.register`."""

from __future__ import annotations

import textwrap

from tfproc_lint.config import Config
from tfproc_lint.engine import lint_source


def findings(source: str) -> list[tuple[int, str]]:
    return sorted((d.line, d.code) for d in lint_source(textwrap.dedent(source), "example.py", Config()))


def messages(source: str) -> list[str]:
    return [d.message for d in lint_source(textwrap.dedent(source), "example.py", Config())]


CHECKPOINT = """\
    import ray
    from ray.train.tensorflow import TensorflowCheckpoint

    def predict(batch):
        {body}
        batch["y"] = model.predict(batch["x"])
        return batch

    if __name__ == "__main__":
        ray.data.read_parquet("x").map_batches(predict).count()
    """


def test_a_tensorflow_checkpoints_get_model_in_a_batch_function_loads_per_batch() -> None:
    for body in ('model = TensorflowCheckpoint.from_directory("ckpt").get_model()',
                 'checkpoint = TensorflowCheckpoint("ckpt")\n        model = checkpoint.get_model()'):
        source = CHECKPOINT.format(body=body)
        assert findings(source) == [(10 + body.count("\n"), "TFP301")], body
        assert "map_batches given a callable class" in messages(source)[0]


def test_get_model_of_something_else_is_not_a_load() -> None:
    for body in ('model = registry.get_model("ckpt")',
                 'model = TensorflowCheckpoint.from_directory("ckpt").get_preprocessor()'):
        assert findings(CHECKPOINT.format(body=body)) == [], body


def test_an_air_predictor_made_per_batch() -> None:
    source = CHECKPOINT.replace("TensorflowCheckpoint", "TensorflowCheckpoint, TensorflowPredictor").format(
        body='model = TensorflowPredictor.from_checkpoint(CKPT, model_definition=build)')
    assert findings(source) == [(10, "TFP301")]


SERVE = """\
    from ray import serve
    from tensorflow import keras

    @serve.deployment(num_replicas=2)
    class Model:
        def __init__(self):
            self.scale = 2.0

        def {method}(self, request):
            model = keras.models.load_model("m.keras")
            return model.predict([[self.scale]]).tolist()
    """


def test_a_serve_request_handler_that_loads_per_request() -> None:
    for method in ("__call__", "predict"):
        source = SERVE.format(method=method)
        assert findings(source) == [(9, "TFP301")], method
        assert "once per replica instead, in the deployment's __init__" in messages(source)[0]


def test_serves_own_hooks_and_plain_classes_are_not_request_handlers() -> None:
    for method in ("reconfigure", "check_health"):
        assert findings(SERVE.format(method=method)) == [], method
    assert findings(SERVE.format(method="__call__").replace("    @serve.deployment(num_replicas=2)\n", "")) == []


def test_a_multiplexed_loader_is_cached_by_serve() -> None:
    source = SERVE.format(method="load").replace(
        "        def load(", "        @serve.multiplexed(max_num_models_per_replica=2)\n        def load(")
    assert findings(source) == []


def test_a_function_deployment_loads_per_request() -> None:
    source = """\
    from ray import serve
    from tensorflow import keras

    @serve.deployment
    def score(request):
        return keras.models.load_model("m.keras").predict([[1.0]]).tolist()
    """
    assert findings(source) == [(5, "TFP301")]


REGISTER = """\
    from pyspark.sql import SparkSession
    from pyspark.sql.functions import udf
    from tensorflow import keras

    def score(x):
        model = keras.models.load_model("m.keras")
        return float(model.predict([[x]])[0, 0])

    if __name__ == "__main__":
        spark = SparkSession.builder.getOrCreate()
        {register}
    """


def test_a_function_registered_for_sql_runs_per_row() -> None:
    source = REGISTER.format(register='spark.udf.register("score", score, "double")')
    assert findings(source) == [(11, "TFP301")]
    assert "given to spark.udf.register() builds TensorFlow state on every row" in messages(source)[0]


def test_registering_a_udf_object_is_judged_where_it_is_made() -> None:
    source = REGISTER.format(register='scorer = udf(score, "double")\n        spark.udf.register("score", scorer)')
    assert findings(source) == [(11, "TFP301")]  # the udf(...) call, not the register


def test_a_handler_loading_through_a_self_helper_but_not_from_self_state() -> None:
    helper = SERVE.format(method="__call__").replace(
        'model = keras.models.load_model("m.keras")', "model = self._load()") + (
        '\n        def _load(self):\n            return keras.models.load_model("m.keras")\n')
    assert findings(helper) == [(9, "TFP301")]
    from_self = SERVE.format(method="__call__").replace('load_model("m.keras")', "load_model(self.path)")
    assert findings(from_self) == []  # self.path may change between requests


def test_a_multiplexed_loader_called_per_request_is_cached() -> None:
    source = SERVE.format(method="__call__").replace(
        'model = keras.models.load_model("m.keras")', "model = self.get_model('tenant-a')") + (
        "\n        @serve.multiplexed(max_num_models_per_replica=2)\n        def get_model(self, model_id):\n"
        '            return keras.models.load_model("m.keras")\n')
    assert findings(source) == []
