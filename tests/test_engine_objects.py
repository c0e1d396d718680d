"""Engine objects a module does not make itself (tfproc_lint/analysis/engine_objects.py):
parameters typed by an annotation, by the file's callers or by an engine-only method; Ray actor
handles in lists, loops, attributes and parameters; star imports of engine modules."""

from __future__ import annotations

import libcst as cst
import pytest

from tfproc_lint.analysis.file_analysis import FileAnalysis
from tfproc_lint.analysis.kinds import Kind
from tfproc_lint.config import Config
from tfproc_lint.engine import lint_source


def routes(source: str) -> list[tuple[int, str]]:
    """(line, route) of each engine crossing."""
    analysis = FileAnalysis(cst.parse_module(source), "example.py", Config())
    return sorted((analysis.line_of(c.call), c.route.label) for c in analysis.crossings if c.owner.kind is Kind.ENGINE)


def findings(source: str) -> list[tuple[int, str]]:
    return sorted((d.line, d.code) for d in lint_source(source, "example.py", Config()))


SPARK = ("import tensorflow as tf\nfrom pyspark.sql import DataFrame, SparkSession\n\n"
         "def score(rows):\n    return rows\n\n")


@pytest.mark.parametrize("body", [
    "def run(rdd):\n    return rdd.mapPartitions(score)\n",
    "def run(df):\n    return df.rdd.mapPartitions(score)\n",
    "def run(df):\n    return df.mapInPandas(score, 'x double')\n",
    "def run(df: DataFrame):\n    return df.select('x').rdd.map(score)\n",
    "def run(df):\n    df = df.filter('x > 0').repartition(4)\n    return df.rdd.mapPartitions(score)\n",
    "def run(df):\n    df = df.filter('x > 0')\n    df = df.repartition(4)\n    return df.rdd.map(score)\n",
    "def run(df):\n    rdd = df.sortWithinPartitions('x').rdd\n    return rdd.mapPartitions(score)\n",
    "def run(sc):\n    nodes = sc.parallelize(range(4), 4)\n    return nodes.mapPartitions(score)\n",
    "def run(df):\n    df.rdd.count()\n    return df.select('x').rdd.map(score)\n",  # typed by its other use
    "def run(name):\n    spark = SparkSession.getActiveSession()\n    return spark.table(name).rdd.map(score)\n",
])
def test_spark_objects_received_or_found(body: str) -> None:
    assert len(routes(SPARK + body)) == 1


@pytest.mark.parametrize("body", [
    "def run(frame):\n    return frame.map(score)\n",  # `map`: builtins, pandas, executors have one
    "def run(frame):\n    return frame.filter(score)\n",
    "def run(frame):\n    frame.mapPartitions(score)\n    return frame.mapInPandas(score, 'x double')\n",  # disagree
    "def run(frame: 'DataFrame'):\n    return frame.map(score)\n",  # a string annotation is not read
    # a name made from the parameter through a member of unknown result
    "def run(df):\n    rdd = df.toLocalIterator().rdd\n    return rdd.mapPartitions(score)\n",
    "def run(loader):\n    rdd = loader.load('x')\n    rdd.mapPartitions(score)\n    return loader.map(score)\n",
])
def test_parameters_with_shared_or_conflicting_methods_stay_unknown(body: str) -> None:
    assert routes(SPARK + body) == []


def test_an_engine_only_method_counts_only_where_the_engine_is_imported() -> None:
    source = "import ray\nimport tensorflow as tf\n\ndef score(rows):\n    return rows\n\n" \
             "def run(rdd):\n    return rdd.mapPartitions(score)\n"
    assert routes(source) == []
    assert len(routes(source.replace("import ray\n", "import pyspark\n"))) == 1


DASK = """\
import numpy as np
import tensorflow as tf
from concurrent.futures import ThreadPoolExecutor
from dask.distributed import Client

def load_and_predict(x):
    model = tf.keras.models.load_model('m.keras')
    return model.predict(x)

"""


@pytest.mark.parametrize("body, expected", [
    ("def run(client: Client, xs):\n    return client.map(load_and_predict, xs)\n", [(11, "TFP301")]),
    ("def run(client, xs):\n    client.upload_file('x.py')\n    return client.map(load_and_predict, xs)\n",
     [(12, "TFP301")]),
    ("def run(client, xs):\n    return client.map(load_and_predict, xs)\n\ndef main():\n    run(Client(), [1])\n",
     [(11, "TFP301")]),  # every caller in the file passes a Client
    ("def run(client, xs):\n    return client.map(load_and_predict, xs)\n", []),  # an executor has `map` too
    ("def run(client, xs):\n    return client.submit(load_and_predict, xs[0])\n", []),
    ("def run(client, xs):\n    return client.map(load_and_predict, xs)\n\ndef main():\n    run(Client(), [1])\n"
     "    run(ThreadPoolExecutor(2), [1])\n", []),  # callers disagree
])
def test_dask_client_parameters_only_when_known(body: str, expected) -> None:
    assert findings(DASK + body) == expected


def test_an_mpi_scatter_is_not_a_dask_scatter() -> None:
    body = "def share(comm):\n    sess = tf.compat.v1.Session()\n    return comm.scatter(sess)\n"
    assert findings(DASK + body) == []
    assert findings(DASK + body.replace("(comm)", "(comm: Client)")) == [(12, "TFP101")]


RAY = """\
import ray
import tensorflow as tf

@ray.remote
class Trainer:
    def fit(self, data):
        return data

"""


@pytest.mark.parametrize("body", [
    "def run(data):\n    trainers = [Trainer.remote() for _ in range(2)]\n    trainers[0].fit.remote(data)\n",
    "def run(data):\n    trainers = [Trainer.remote(), Trainer.options(num_cpus=1).remote()]\n"
    "    for t in trainers:\n        t.fit.remote(data)\n",
    "def run(data):\n    trainers = [Trainer.remote() for _ in range(2)]\n"
    "    return [t.fit.remote(data) for t in trainers]\n",
    "class Pool:\n    def __init__(self):\n        self.trainer = Trainer.remote()\n\n"
    "    def run(self, data):\n        self.trainer.fit.remote(data)\n",
    "class Pool:\n    def __init__(self):\n        self.trainers = [Trainer.remote() for _ in range(2)]\n\n"
    "    def run(self, data):\n        self.trainers[1].fit.remote(data)\n",
    "def run(trainer, data):\n    trainer.fit.remote(data)\n",
    "def run(trainers, data):\n    for t in trainers:\n        t.fit.remote(data)\n",
    "def run(fit, data):\n    fit.options(num_cpus=1).remote(data)\n",
])
def test_ray_actor_handles_kept_or_received(body: str) -> None:
    source = RAY + body + "\ndef main():\n    run(tf.data.Dataset.range(4))\n"
    assert [label for _, label in routes(source) if "constructor" not in label] != []


def test_a_list_holding_something_else_is_not_a_list_of_handles() -> None:
    body = "def run(data, other):\n    trainers = [Trainer.remote(), other]\n    trainers[1].fit.remote(data)\n"
    assert [label for _, label in routes(RAY + body) if "constructor" not in label] == []


def test_a_parameters_remote_needs_ray_imported() -> None:
    source = "import tensorflow as tf\nimport pyspark\n\ndef run(repo, data):\n    repo.origin.remote(data)\n"
    assert routes(source) == []


STAR = """\
import tensorflow as tf
from pyspark.sql.functions import *

@udf('double')
def score(x):
    model = tf.keras.models.load_model('m.keras')
    return float(model.predict([[x]])[0, 0])
"""


def test_names_from_an_engine_modules_star_import() -> None:
    assert findings(STAR) == [(5, "TFP301")]


def test_another_star_import_may_rebind_the_name() -> None:
    assert findings(STAR.replace("import *\n", "import *\nfrom helpers import *\n", 1)) == []


def test_a_local_binding_wins_over_the_star_import() -> None:
    assert findings(STAR.replace("import *\n", "import *\n\ndef udf(kind):\n    return lambda f: f\n", 1)) == []


RETURNS = """\
import ray
import tensorflow as tf

@ray.remote
def make(kind):
    graph = tf.Graph()
    if kind == 'session':
        return tf.compat.v1.Session(graph=graph)
    if kind == 'dataset':
        return tf.data.Dataset.range(4)
    if kind == 'model':
        return tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
    return graph

if __name__ == '__main__':
    ray.get(make.remote('session'))
"""


def test_state_a_ray_task_returns() -> None:
    """Measured: ray.get raises RayTaskError(TypeError) for a session or graph, RayTaskError(InvalidArgumentError)
    for a Dataset; a Keras model comes back."""
    assert findings(RETURNS) == [(8, "TFP101"), (10, "TFP102"), (13, "TFP101")]
    text = [d.message for d in lint_source(RETURNS, "example.py", Config())]
    assert "RayTaskError(TypeError): cannot pickle 'Graph' object" in text[0]


def test_state_returned_by_functions_ray_does_not_run() -> None:
    plain = RETURNS.replace("@ray.remote\n", "")
    assert findings(plain.replace("make.remote('session')", "make('session')")) == []
    dask = "import dask\n" + plain.replace("import ray\n", "").replace("def make", "@dask.delayed\ndef make")
    # a Dask task's result: no finding (threads without a distributed Client; TFP102's Keras case is Dask's own)
    assert findings(dask.replace("ray.get(make.remote('session'))", "make('session').compute()")) == []
