"""Ray, Dask and Spark as process boundaries (tfproc_lint/analysis/engines/): what crosses,
what the engine's cloudpickle sends fine, and the engine's own fix in each message."""

from __future__ import annotations

import pytest

from tfproc_lint.analysis import prefilter
from tfproc_lint.config import Config
from tfproc_lint.engine import lint_source


def findings(source: str) -> list[tuple[int, str]]:
    return sorted((d.line, d.code) for d in lint_source(source, "example.py", Config()))


def messages(source: str) -> list[str]:
    return [d.message for d in lint_source(source, "example.py", Config())]


RAY_HEAD = """\
import numpy as np
import ray
import tensorflow as tf

@tf.function
def double(x):
    return x * 2

@ray.remote
def apply(fn, x):
    return fn(x)
"""


def test_traced_tf_function_as_a_ray_argument() -> None:
    source = RAY_HEAD + "if __name__ == '__main__':\n    double(1.0)\n    ray.get(apply.remote(double, 1.0))\n"
    assert findings(source) == [(14, "TFP102")]
    assert "Could not serialize the argument" in messages(source)[0]


def test_untraced_tf_function_pickles() -> None:
    source = RAY_HEAD + "if __name__ == '__main__':\n    ray.get(apply.remote(double, 1.0))\n"
    assert findings(source) == []


def test_a_call_inside_a_ray_task_does_not_trace_the_drivers_function() -> None:
    source = RAY_HEAD + (
        "@ray.remote\ndef inner(x):\n    return double(x)\n\n"
        "if __name__ == '__main__':\n    ray.get(apply.remote(double, 1.0))\n"
    )
    assert findings(source) == []


@pytest.mark.parametrize("send", ["Scorer.remote(model)", "apply.remote(np.max, model)", "ray.put(model)"])
def test_keras_model_sent_once_is_not_reported(send: str) -> None:
    source = RAY_HEAD + (
        "@ray.remote\nclass Scorer:\n    def __init__(self, model):\n        self.model = model\n\n"
        f"if __name__ == '__main__':\n    model = tf.keras.models.load_model('m.keras')\n    {send}\n"
    )
    assert findings(source) == []


def test_session_through_ray_put_and_an_actor_method() -> None:
    source = RAY_HEAD + (
        "@ray.remote\nclass Scorer:\n    def score(self, sess):\n        return 1\n\n"
        "if __name__ == '__main__':\n    sess = tf.compat.v1.Session()\n    ray.put(sess)\n"
        "    scorer = Scorer.remote()\n    scorer.score.remote(sess)\n"
    )
    assert findings(source) == [(19, "TFP101"), (21, "TFP101")]


def test_captured_global_only_in_a_script() -> None:
    task = RAY_HEAD + "@ray.remote\ndef uses(x):\n    return double(x)\n\n"
    script = task + "if __name__ == '__main__':\n    double(1.0)\n    ray.get(uses.remote(1.0))\n"
    assert findings(script) == [(18, "TFP103")]
    assert "Could not serialize the function" in messages(script)[0]
    library = task + "def run():\n    double(1.0)\n    return ray.get(uses.remote(1.0))\n"
    assert findings(library) == []  # an importable module's function is pickled by reference


LOADS = "    model = tf.keras.models.load_model('m.keras')\n    return model.predict(x)\n"


def test_ray_task_loading_per_call_in_a_loop() -> None:
    source = RAY_HEAD + "@ray.remote\ndef predict(x):\n" + LOADS + (
        "\nif __name__ == '__main__':\n    ray.get([predict.remote(x) for x in range(8)])\n"
        "    ray.get(predict.remote(1))\n"
    )
    assert findings(source) == [(18, "TFP301")]  # the single task loads once in all
    assert "@ray.remote class that loads it in __init__" in messages(source)[0]


def test_ray_remote_wrapping_call_is_a_task() -> None:
    source = RAY_HEAD + "def predict(x):\n" + LOADS + (
        "\npredict_remote = ray.remote(num_gpus=0)(predict)\n"
        "if __name__ == '__main__':\n    ray.get([predict_remote.remote(x) for x in range(8)])\n"
    )
    assert findings(source) == [(18, "TFP301")]


def test_ray_data_map_batches_function_versus_class() -> None:
    source = RAY_HEAD + "def embed(x):\n" + LOADS + (
        "\nclass Embed:\n    def __init__(self):\n        self.model = tf.keras.models.load_model('m.keras')\n\n"
        "    def __call__(self, x):\n        return self.model.predict(x)\n\n"
        "ds = ray.data.range(8)\nds.map_batches(embed)\nds.map_batches(Embed, concurrency=2)\n"
    )
    assert findings(source) == [(24, "TFP301")]


@pytest.mark.parametrize("gpus, expected", [("0.5", [(12, "TFP401")]), ("1", []), ("1 / 4", [(12, "TFP401")])])
def test_ray_fractional_gpus(gpus: str, expected) -> None:
    source = RAY_HEAD + f"@ray.remote(num_gpus={gpus})\ndef predict(x):\n" + LOADS + (
        "\n@ray.remote(num_gpus=0.5)\ndef grows(x):\n"
        "    for gpu in tf.config.list_physical_devices('GPU'):\n"
        "        tf.config.experimental.set_memory_growth(gpu, True)\n" + LOADS
    )
    assert findings(source) == expected


DASK_HEAD = """\
import numpy as np
import tensorflow as tf
from dask.distributed import Client

def predict(x):
    model = tf.keras.models.load_model('m.keras')
    return model.predict(x)

"""


def test_dask_map_per_call_load_and_its_initializers() -> None:
    bad = DASK_HEAD + "if __name__ == '__main__':\n    client = Client()\n    client.map(predict, range(8))\n"
    assert findings(bad) == [(11, "TFP301")]
    assert "WorkerPlugin" in messages(bad)[0]
    with_run = bad.replace("    client.map", "    client.run(print)\n    client.map")
    assert findings(with_run) == []


def test_dask_scatter_of_a_keras_model_but_not_submit() -> None:
    source = DASK_HEAD + (
        "if __name__ == '__main__':\n    client = Client()\n    model = tf.keras.models.load_model('m.keras')\n"
        "    client.submit(predict, model)\n    client.scatter(model)\n    client.scatter(np.ones(3))\n"
    )
    assert findings(source) == [(13, "TFP102")]
    assert "_updated_config" in messages(source)[0]


def test_dask_delayed_dataset_crosses_only_to_a_distributed_client() -> None:
    calls = "ds = tf.data.Dataset.range(3)\ndask.delayed(predict)(ds)\ndask.delayed(predict)(np.ones(3))\n"
    threads = DASK_HEAD.replace("from dask.distributed import Client", "import dask") + calls
    assert findings(threads) == []  # the default scheduler runs delayed functions in threads: nothing pickled
    distributed = DASK_HEAD.replace("from dask.distributed import Client",
                                    "import dask\nfrom dask.distributed import Client") + "client = Client()\n" + calls
    # the module-level Client() also starts a process cluster at import (TFP202)
    assert findings(distributed) == [(10, "TFP202"), (12, "TFP102")]


SPARK_HEAD = """\
from typing import Iterator

import pandas as pd
import tensorflow as tf
from pyspark.sql import SparkSession
from pyspark.sql.functions import pandas_udf, udf

"""


def test_spark_row_udf_versus_iterator_pandas_udf() -> None:
    source = SPARK_HEAD + (
        "@udf('double')\ndef row(x):\n    model = tf.keras.models.load_model('m.keras')\n"
        "    return float(model.predict([[x]])[0, 0])\n\n"
        "@pandas_udf('double')\ndef batches(it: Iterator[pd.Series]) -> Iterator[pd.Series]:\n"
        "    model = tf.keras.models.load_model('m.keras')\n    for b in it:\n        yield b\n\n"
        "def plain(x):\n    model = tf.keras.models.load_model('m.keras')\n    return x\n\n"
        "plain_udf = udf(plain, 'double')\n"
    )
    assert findings(source) == [(9, "TFP301"), (23, "TFP301")]


def test_spark_scalar_iter_pandas_udf_type_runs_once_per_partition() -> None:
    source = SPARK_HEAD.replace("pandas_udf, udf", "PandasUDFType, pandas_udf") + (
        "@pandas_udf('double', PandasUDFType.SCALAR_ITER)\ndef batches(it):\n"
        "    model = tf.keras.models.load_model('m.keras')\n    for b in it:\n        yield b\n\n"
        "@pandas_udf('double', PandasUDFType.SCALAR)\ndef per_batch(s):\n"
        "    model = tf.keras.models.load_model('m.keras')\n    return s\n"
    )
    assert findings(source) == [(15, "TFP301")]


def test_spark_closure_and_partition_function() -> None:
    source = SPARK_HEAD + (
        "sess = tf.compat.v1.Session()\n\n"
        "def per_partition(rows):\n    model = tf.keras.models.load_model('m.keras')\n    return rows\n\n"
        "if __name__ == '__main__':\n    spark = SparkSession.builder.master('local[2]').getOrCreate()\n"
        "    rdd = spark.sparkContext.parallelize(range(8))\n"
        "    rdd.mapPartitions(per_partition).collect()\n"
        "    rdd.map(lambda x: sess.run('y:0')).collect()\n"
        "    spark.sparkContext.broadcast(sess)\n"
    )
    assert findings(source) == [(18, "TFP103"), (19, "TFP101")]


def test_a_map_method_of_something_else_is_not_an_engine() -> None:
    source = RAY_HEAD + "def predict(x):\n" + LOADS + "\nresults = list(map(predict, range(8)))\n" + (
        "class Batches:\n    def map(self, fn):\n        return fn\n\nBatches().map(predict)\n"
    )
    assert findings(source) == []


@pytest.mark.parametrize("module", ["ray", "dask.distributed", "pyspark.sql", "distributed"])
def test_a_tensorflow_file_importing_an_engine_passes_the_prefilter(module: str) -> None:
    source = f"import tensorflow as tf\nfrom {module} import something\n"
    assert prefilter.may_match(source)
    assert prefilter.may_match_bytes(source.encode())


def test_an_engine_without_tensorflow_is_skipped() -> None:
    assert not prefilter.may_match("import ray\nray.init()\n")


ROW_LOAD = (
    "def score(row):\n    model = tf.keras.models.load_model('m.keras')\n"
    "    return float(model.predict([[row]])[0, 0])\n\n"
)


def test_spark_context_imported_from_its_module() -> None:
    source = SPARK_HEAD + "from pyspark.context import SparkContext\n\n" + ROW_LOAD + (
        "if __name__ == '__main__':\n    sc = SparkContext(appName='score')\n"
        "    sc.textFile('rows.txt').map(score).collect()\n"
    )
    assert findings(source) == [(16, "TFP301")]


def test_spark_read_gives_a_dataframe() -> None:
    source = SPARK_HEAD.replace("from pyspark.sql import", "from pyspark.sql.session import") + ROW_LOAD + (
        "if __name__ == '__main__':\n    spark = SparkSession.builder.getOrCreate()\n"
        "    df = spark.read.option('header', True).csv('rows.csv')\n"
        "    df.rdd.map(score).collect()\n"
        "    spark.read.parquet('rows').mapInPandas(lambda it: it, 'x double').collect()\n"
    )
    assert findings(source) == [(15, "TFP301")]


def test_spark_udf_given_its_return_type_first() -> None:
    source = SPARK_HEAD + "from pyspark.sql.types import DoubleType\n\n" + ROW_LOAD + (
        "def batches(it: Iterator[pd.Series]) -> Iterator[pd.Series]:\n"
        "    model = tf.keras.models.load_model('m.keras')\n    for b in it:\n        yield b\n\n"
        "return_type = 'double'\nrow_udf = udf(DoubleType())(score)\n"
        "batch_udf = pandas_udf(return_type)(batches)\n"
    )
    assert findings(source) == [(20, "TFP301")]


GROWTH_THEN_LOAD = (
    "    for gpu in tf.config.list_physical_devices('GPU'):\n"
    "        tf.config.experimental.set_memory_growth(gpu, True)\n"
    "    model = tf.keras.models.load_model('m.keras')\n"
)


@pytest.mark.parametrize("hand_over", [
    "from pyspark.ml.functions import predict_batch_udf\n"
    "score = predict_batch_udf(make_predict, return_type='double', batch_size=64)\n",
    "from tensorflowonspark import TFCluster\ncluster = TFCluster.run(sc, make_predict, None, 2)\n",
])
def test_settings_in_functions_run_by_spark_workers_start_fresh(hand_over: str) -> None:
    """The driver started the runtime, but these functions run in Spark's Python workers."""
    source = SPARK_HEAD + "from pyspark import SparkContext\n\nsc = SparkContext()\n" + (
        "driver_model = tf.keras.Sequential([tf.keras.layers.Dense(1)])\ndriver_model(tf.ones((1, 1)))\n\n"
        "def make_predict():\n" + GROWTH_THEN_LOAD + "    return model.predict\n\n" + hand_over
    )
    assert findings(source) == []
    called_in_the_driver = source + "make_predict()\n"
    assert findings(called_in_the_driver) == [(16, "TFP402")]


def test_predict_batch_udf_pickles_its_function_with_the_globals_it_reads() -> None:
    source = SPARK_HEAD + "from pyspark.ml.functions import predict_batch_udf\n\n" + (
        "sess = tf.compat.v1.Session()\n\ndef make_predict():\n    return lambda x: sess.run('y:0', {'x:0': x})\n\n"
        "score = predict_batch_udf(make_predict, return_type='double', batch_size=64)\n"
    )
    assert findings(source) == [(15, "TFP103")]


def test_a_decorated_pandas_udf_runs_in_fresh_workers() -> None:
    source = SPARK_HEAD + (
        "driver_model = tf.keras.Sequential([tf.keras.layers.Dense(1)])\ndriver_model(tf.ones((1, 1)))\n\n"
        "@pandas_udf('double')\ndef score(batches: Iterator[pd.Series]) -> Iterator[pd.Series]:\n" + GROWTH_THEN_LOAD
        + "    for batch in batches:\n        yield batch\n\n"
        "spark = SparkSession.builder.getOrCreate()\n"
        "spark.range(8).select(score('id')).show()  # a column expression: the body runs in the workers\n"
    )
    assert findings(source) == []


DELAYED_HEAD = """\
import dask
import numpy as np
import tensorflow as tf
from dask.distributed import Client

def build(width):
    return tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(width)])

@dask.delayed
def fitted(width):
    model = build(width)
    model.compile(optimizer='adam', loss='mse')
    return model

@dask.delayed
def fitted_weights(width):
    return build(width).get_weights()

@dask.delayed
def score(x):
    model = tf.keras.models.load_model('m.keras')
    return model.predict(x)

"""


def test_a_keras_model_returned_by_a_dask_task_under_a_client() -> None:
    main = "if __name__ == '__main__':\n    client = Client()\n    dask.compute(fitted(8), fitted_weights(8))\n"
    source = DELAYED_HEAD + main
    assert findings(source) == [(13, "TFP102")]
    assert "returned by a Dask task" in messages(source)[0]
    assert findings(DELAYED_HEAD + main.replace("    client = Client()\n", "")) == []  # threads: nothing moves


def test_a_delayed_function_called_in_a_loop_loads_per_call() -> None:
    source = DELAYED_HEAD + (
        "@dask.delayed\ndef untrained(seed):\n    inputs = tf.keras.Input((4,))\n"
        "    model = tf.keras.Model(inputs=inputs, outputs=tf.keras.layers.Dense(1)(inputs))\n    return model\n\n"
        "if __name__ == '__main__':\n    client = Client()\n"
        "    dask.compute(*[score(np.ones((1, 4))) for _ in range(8)], *[untrained(s) for s in range(8)])\n"
    )
    # building the model a task returns is the task's product, not a load to hoist
    assert findings(source) == [(28, "TFP102"), (32, "TFP301")]
