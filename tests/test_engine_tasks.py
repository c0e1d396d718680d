"""What an engine crossing's owner says of its task (values.EngineTask): the engine, how many times
the callable runs (TaskGrain), what the call does (TaskCall) and the object method it names; and the
pickler and provenance a process owner carries instead of string-keyed facts."""

from __future__ import annotations

import libcst as cst

from tfproc_lint.analysis.file_analysis import FileAnalysis
from tfproc_lint.analysis.kinds import Kind
from tfproc_lint.analysis.values import Pickler, TaskCall
from tfproc_lint.config import Config
from tfproc_lint.knowledge.engines import TaskGrain

SOURCE = """\
import ray
import pandas as pd
from typing import Iterator
from dask.distributed import Client
from pyspark.sql.functions import pandas_udf, udf

@ray.remote(num_gpus=0.5)
def score(row):
    return row

@pandas_udf("double")
def scores(batches: Iterator[pd.Series]) -> Iterator[pd.Series]:
    for batch in batches:
        yield batch

@udf("double")
def one(row):
    return row

if __name__ == "__main__":
    ref = ray.put([1, 2])
    futures = [score.remote(row) for row in range(4)]
    client = Client()
    client.map(len, [[1], [2]])
    client.scatter([1, 2])
"""


def tasks(source: str) -> dict[int, tuple]:
    analysis = FileAnalysis(cst.parse_module(source), "example.py", Config())
    found = {}
    for crossing in analysis.crossings:
        if crossing.owner.kind is Kind.ENGINE:
            task = crossing.owner.task
            assert crossing.owner.pickler is Pickler.CLOUDPICKLE and crossing.owner.pickles_by_value
            found[analysis.line_of(crossing.call)] = (task.engine, task.grain, task.call, task.method,
                                                      task.num_gpus is not None)
    return found


def test_each_engine_call_has_its_typed_task() -> None:
    assert tasks(SOURCE) == {
        11: ("spark", TaskGrain.PER_PARTITION, TaskCall.UDF, None, False),
        16: ("spark", TaskGrain.PER_ROW, TaskCall.UDF, None, False),
        21: ("ray", TaskGrain.ONE, TaskCall.PUT, None, False),
        22: ("ray", TaskGrain.ONE, TaskCall.TASK, None, True),
        24: ("dask", TaskGrain.PER_ITEM, TaskCall.OBJECT_METHOD, "map", False),
        25: ("dask", TaskGrain.PER_WORKER, TaskCall.OBJECT_METHOD, "scatter", False),
    }


def test_grains_say_how_often_and_name_their_unit() -> None:
    assert [grain for grain in TaskGrain if grain.runs_many] == [TaskGrain.PER_ITEM, TaskGrain.PER_ROW,
                                                                 TaskGrain.PER_BATCH]
    assert [grain.unit for grain in TaskGrain] == ["task", "item", "row", "batch", "task", "task"]


def test_process_owners_carry_their_pickler_and_provenance() -> None:
    source = """\
import multiprocessing as mp
import pathos.multiprocessing as pm
from joblib import Parallel

def child(queue):
    queue.put(1)

if __name__ == "__main__":
    manager = mp.Manager()
    shared = manager.list()
    queue = mp.Queue()
    mp.Process(target=child, args=(queue,)).start()
    pool = pm.Pool(2)
    forked = Parallel(n_jobs=2, backend="multiprocessing")
    loky = Parallel(n_jobs=2)
"""
    analysis = FileAnalysis(cst.parse_module(source), "example.py", Config())
    module = analysis.symbols.module_scope
    end = analysis.symbols.end_of_file

    names = {name: cst.Name(name) for name in ("shared", "queue", "pool", "forked", "loky", "manager")}

    def value(name):  # each its own node, kept alive: the classifier remembers nodes by identity
        return analysis.classifier.classify(names[name], module, end)

    assert value("shared").provenance.proxy and value("shared").provenance.manager is not None
    assert not value("queue").provenance.proxy
    assert value("pool").pickler is Pickler.DILL and value("pool").pickles_by_value
    assert value("forked").pickler is Pickler.PICKLE and not value("forked").pickles_by_value
    assert value("loky").pickler is Pickler.CLOUDPICKLE
    assert value("manager").pickler is None and not value("manager").pickles_by_value
    child = next(info for info in analysis.symbols.functions.values() if info.node.name.value == "child")
    given = cst.Name("queue")
    assert analysis.classifier.classify(given, child.scope, end).provenance.in_child
    assert not value("queue").provenance.in_child
