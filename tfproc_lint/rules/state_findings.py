"""Finding shapes TFP101 and TFP102 share: TensorFlow state an engine fails to send to its workers,
or a Ray task returns. The rule that reports one decides which states it covers (TF1 or TF2)."""

from __future__ import annotations

from tfproc_lint.analysis import engines
from tfproc_lint.analysis.engines import ray_returns
from tfproc_lint.analysis.kinds import STATE_NOUNS
from tfproc_lint.rules.base import Finding, finding, shown, worded


@finding
class SentToEngine(Finding):
    """State a Ray, Dask or Spark driver fails to serialise for its workers (a session or graph; a
    traced tf.function or a Dataset; a Keras model Dask's own serializer fails on)."""

    noun: str
    state: str = shown()
    engine: str  # its name: "ray", "dask", "spark"
    route: str = worded()
    failure: str = worded()

    @classmethod
    def of(cls, sent: engines.EngineSentState) -> SentToEngine:
        return cls(STATE_NOUNS[sent.kind], sent.code, sent.engine, sent.route, sent.failure)

    def message(self) -> str:
        return (f"{self.noun} `{self.state}` sent to {engines.ENGINE_NOUNS[self.engine]} workers by {self.route}: "
                f"{self.failure}; {engines.REMEDIES[self.engine]}")


@finding
class ReturnedByRayTask(Finding):
    """State a Ray task returns: Ray pickles it in the worker, and `ray.get` raises."""

    noun: str
    state: str = shown()
    task: str = shown()  # the task's callable
    line: int = shown()  # of the call that submits it
    error: str  # what ray.get raises (measured)

    @classmethod
    def of(cls, returned: ray_returns.RayReturnedState) -> ReturnedByRayTask:
        return cls(STATE_NOUNS[returned.kind], returned.code, returned.task, returned.line, returned.error)

    def message(self) -> str:
        return (f"{self.noun} `{self.state}` returned by a Ray task (`{self.task}`, line {self.line}): Ray pickles "
                f"the result in the worker and ray.get raises {self.error}; return data or a path and build it "
                "where it is used")
