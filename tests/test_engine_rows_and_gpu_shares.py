"""Issue 30, classes 1 and 6: TFP303 on engine tasks that take one row per call (a row udf, a plain
pandas_udf or map_batches looping over rows, tasks and Ray actor methods sent one row each in a loop)
only where the model is kept per worker; TFP401's GPU shares from variables and config attributes."""

from __future__ import annotations

import textwrap

import pytest

from tfproc_lint.config import Config, apply_options
from tfproc_lint.engine import lint_source

TFP303_ON = apply_options(Config(), {"extend-select": "TFP303"}, "test")


def findings(source: str, config: Config = TFP303_ON) -> list[tuple[int, str]]:
    return sorted((d.line, d.code) for d in lint_source(textwrap.dedent(source), "example.py", config))


RAY = """\
    import numpy as np
    import ray
    import tensorflow as tf

    _model = None

    @ray.remote
    def score(row):
        global _model
        if _model is None:
            _model = tf.keras.models.load_model("m.keras")
        return _model.predict_on_batch(row[None])

    @ray.remote
    def score_loaded(row):
        model = tf.keras.models.load_model("m.keras")
        return model.predict_on_batch(row[None])

    @ray.remote
    class Scorer:
        def __init__(self):
            self.model = tf.keras.models.load_model("m.keras")

        def score(self, row):
            return self.model.predict_on_batch(np.expand_dims(row, 0))

    if __name__ == "__main__":
        rows = np.load("rows.npy")
        driver_model = tf.keras.models.load_model("m.keras")

        @ray.remote
        def score_captured(row):
            return driver_model.predict_on_batch(row[None])

        {call}
    """


@pytest.mark.parametrize("call, expected", [
    ("ray.get([score.remote(row) for row in rows])", [(35, "TFP303")]),  # a lazy global: per worker
    ("scorer = Scorer.remote()\n        ray.get([scorer.score.remote(r) for r in rows])", [(36, "TFP303")]),
    ("ray.get(score.remote(rows[0]))", []),  # one task, not a loop
    ("ray.get([score_captured.remote(row) for row in rows])", []),  # the driver's model (TFP103's ground)
    ("scorer = Scorer.remote()\n        ray.get(scorer.score.remote(rows[0]))", []),
])
def test_ray_tasks_and_actor_methods_per_row(call: str, expected) -> None:
    assert findings(RAY.replace("{call}", call)) == expected


def test_a_task_that_loads_per_call_is_tfp301_not_tfp303() -> None:
    assert findings(RAY.replace("{call}", "ray.get([score_loaded.remote(row) for row in rows])")) \
        == [(35, "TFP301")]


DASK = """\
    import dask
    import numpy as np
    import tensorflow as tf
    from dask.distributed import Client, WorkerPlugin, get_worker

    _model = None

    class Load(WorkerPlugin):
        def setup(self, worker):
            worker.model = tf.keras.models.load_model("m.keras")

    def score_plugin(row):
        return get_worker().model.predict_on_batch(row[None])

    def score_lazy(row):
        global _model
        if _model is None:
            _model = tf.keras.models.load_model("m.keras")
        return _model.predict_on_batch(row[None])

    if __name__ == "__main__":
        client = Client("tcp://scheduler:8786")
        client.register_plugin(Load())
        rows = np.load("rows.npy")
        {call}
    """


@pytest.mark.parametrize("call, expected", [
    ("client.gather([client.submit(score_plugin, row) for row in rows])", [(25, "TFP303")]),
    ("dask.compute(*[dask.delayed(score_plugin)(row) for row in rows])", [(25, "TFP303")]),
    ("client.gather(client.submit(score_plugin, rows[0]))", []),  # one task
    # a script's lazy global lasts one task on Dask (fresh globals per task, measured): not per worker
    ("client.gather([client.submit(score_lazy, row) for row in rows])", []),
])
def test_dask_tasks_per_row(call: str, expected) -> None:
    assert findings(DASK.replace("{call}", call)) == expected


SPARK_AND_RAY_DATA = """\
    import numpy as np
    import pandas as pd
    import ray
    import tensorflow as tf
    from pyspark.sql.functions import pandas_udf, udf

    _model = None

    def model():
        global _model
        if _model is None:
            _model = tf.keras.models.load_model("m.keras")
        return _model

    @udf("double")
    def row_udf(age, income):
        return float(model().predict_on_batch(np.array([[age, income]]))[0, 0])

    @pandas_udf("double")
    def looping_udf(features: pd.Series) -> pd.Series:
        return pd.Series([float(model().predict_on_batch(np.array([f]))[0, 0]) for f in features])

    @pandas_udf("double")
    def batched_udf(features: pd.Series) -> pd.Series:
        return pd.Series(model().predict_on_batch(np.stack(features.to_numpy()))[:, 0])

    @udf("double")
    def loading_udf(features):
        m = tf.keras.models.load_model("m.keras")
        return float(m.predict_on_batch(np.array([features]))[0, 0])

    class Rows:
        def __init__(self):
            self.model = tf.keras.models.load_model("m.keras")

        def __call__(self, batch):
            return {"s": np.array([self.model.predict_on_batch(r[None])[0, 0] for r in batch["data"]])}

    class Batches:
        def __init__(self):
            self.model = tf.keras.models.load_model("m.keras")

        def __call__(self, batch):
            return {"s": self.model.predict_on_batch(batch["data"])[:, 0]}

    if __name__ == "__main__":
        ds = ray.data.from_numpy(np.load("rows.npy"))
        ds.map_batches(Rows, concurrency=2).take_all()
        ds.map_batches(Batches, concurrency=2).take_all()
    """


def test_spark_udfs_and_map_batches_classes() -> None:
    assert findings(SPARK_AND_RAY_DATA) == [(16, "TFP303"), (20, "TFP303"), (28, "TFP301"), (48, "TFP303")]


def test_the_message_names_the_engine_fix_and_its_figures() -> None:
    [ray_message] = [d.message for d in lint_source(textwrap.dedent(
        RAY.replace("{call}", "ray.get([score.remote(row) for row in rows])")), "example.py", TFP303_ON)]
    assert "one row per task, one task per item of the loop" in ray_message and "map_batches" in ray_message
    assert "rows/s with a task per row" in ray_message


# TFP401: GPU shares from a variable or a config class --------------------------------------------------
GPU = """\
    from dataclasses import dataclass

    import ray
    import tensorflow as tf

    @dataclass
    class Config:
        gpus: float = 0.5

    CONFIG = Config()

    @ray.remote
    def train(step):
        return float(tf.reduce_sum(tf.random.normal((8, 8))) * step)

    def main():
        share = 0.25
        {body}
    """


@pytest.mark.parametrize("body, expected", [
    ("ray.get([train.options(num_gpus=share).remote(s) for s in range(4)])", [(18, "TFP401")]),
    ("ray.get([train.options(num_gpus=CONFIG.gpus).remote(s) for s in range(4)])", [(18, "TFP401")]),
    ("ray.get([train.options(num_gpus=Config.gpus).remote(s) for s in range(4)])", [(18, "TFP401")]),
    # set at run time: not known statically
    ("CONFIG.gpus = float(input())\n    ray.get([train.options(num_gpus=CONFIG.gpus).remote(1)])", []),
    ("ray.get([train.options(num_gpus=share * 4).remote(s) for s in range(4)])", []),
    ("ray.get([train.options(num_gpus=1).remote(s) for s in range(4)])", []),
])
def test_ray_gpu_shares_from_variables_and_config(body: str, expected) -> None:
    assert findings(GPU.replace("{body}", body), Config()) == expected


# TFP401: zero-GPU Ray workers, local Dask clusters on one GPU, TF1 sessions per engine task -----------
RAY_ZERO = """\
    import ray
    import tensorflow as tf

    @ray.remote
    def augment(images):
        {setup}return tf.image.random_flip_left_right(tf.constant(images)).numpy()

    @ray.remote(num_gpus={gpus})
    class Trainer:
        def __init__(self):
            self.model = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(1)])
    """


@pytest.mark.parametrize("setup, gpus, expected", [
    ("", "1", [(5, "TFP401")]),
    ("", "0", []),  # no task asks for a GPU: nothing says the node has one
    ("tf.config.set_visible_devices([], 'GPU')\n        ", "1", []),
    ("ray.get_runtime_context()\n        ", "1", [(5, "TFP401")]),
])
def test_ray_zero_gpu_task_next_to_a_gpu_actor(setup: str, gpus: str, expected) -> None:
    source = RAY_ZERO.replace("{setup}", setup).replace("{gpus}", gpus)
    assert findings(source, Config()) == expected


def test_a_runtime_env_that_names_cuda_visible_devices_silences_it() -> None:
    source = RAY_ZERO.replace("{setup}", "").replace("{gpus}", "1") + (
        "\n    ray.init(runtime_env={'env_vars': {'RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO': '1'}})\n")
    assert findings(source, Config()) == []


DASK_GPU = """\
    import tensorflow as tf
    from dask.distributed import Client, LocalCluster

    def train(k):
        return float(tf.reduce_sum(tf.random.normal((8, 8))) * k)

    if __name__ == "__main__":
        with LocalCluster({options}) as cluster, Client(cluster) as client:
            print(client.gather(client.map(train, range(8))))
    """


@pytest.mark.parametrize("options, expected", [
    ("n_workers=2, resources={'GPU': 1}", [(8, "TFP401")]),
    ("n_workers=1, resources={'GPU': 1}", []),
    ("n_workers=2", []),  # no GPU advertised
    ("n_workers=2, processes=False, resources={'GPU': 1}", []),  # threads: one process
])
def test_dask_local_cluster_whose_workers_all_advertise_the_gpu(options: str, expected) -> None:
    assert findings(DASK_GPU.replace("{options}", options), Config()) == expected


SPARK_SESSION = """\
    import tensorflow.compat.v1 as tf
    from pyspark import SparkContext

    def score(rows):
        with tf.device("/GPU:0"):
            x = tf.placeholder(tf.float32, [None, 4])
            y = tf.reduce_sum(x, axis=1)
        {config}
        with tf.Session({arguments}) as sess:
            for row in rows:
                yield sess.run(y, {x: [row]})

    if __name__ == "__main__":
        SparkContext().parallelize([[1.0] * 4] * 8, 2).mapPartitions(score).collect()
    """


@pytest.mark.parametrize("config, arguments, expected", [
    ("", "", [(9, "TFP401")]),
    ("config = tf.ConfigProto(gpu_options=tf.GPUOptions(allow_growth=False))", "config=config", [(9, "TFP401")]),
    ("config = tf.ConfigProto(gpu_options=tf.GPUOptions(allow_growth=True))", "config=config", []),
    ("config = tf.ConfigProto(device_count={'GPU': 0})", "config=config", []),
])
def test_tf1_session_per_engine_task(config: str, arguments: str, expected) -> None:
    source = SPARK_SESSION.replace("{config}", config or "pass").replace("{arguments}", arguments)
    assert findings(source, Config()) == expected


def test_no_gpu_in_the_file_no_session_finding() -> None:
    source = SPARK_SESSION.replace('with tf.device("/GPU:0"):', "if True:").replace("{config}", "pass") \
        .replace("{arguments}", "")
    assert findings(source, Config()) == []
