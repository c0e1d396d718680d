"""TFP102: a tf.function, Dataset, SavedModel or Keras model is sent to another process."""

from __future__ import annotations

from tfproc_lint.analysis import engine_objects, engines, outcomes
from tfproc_lint.analysis.engines import dask, ray_refs, ray_returns
from tfproc_lint.analysis.kinds import STATE_NOUNS, TF2_STATE, Kind
from tfproc_lint.analysis.routes import Pickling
from tfproc_lint.analysis.workers import WorkerKind
from tfproc_lint.fixes.state_initializer import LoadStateInWorker
from tfproc_lint.rules.base import Example, Finding, Report, Rule, finding, shown, worded
from tfproc_lint.rules.state_findings import ReturnedByRayTask, SentToEngine


@finding
class TFFunctionAsCallable(Finding):
    """A tf.function given as the callable of a route that pickles it."""

    function: str = shown()  # its code
    made_in: str | None  # the place in another module of the project that makes it
    route: str = worded()

    def message(self) -> str:
        made = f" (made in {self.made_in})" if self.made_in is not None else ""
        return (f"tf.function `{self.function}`{made} used as the callable of {self.route}: pickling fails "
                "(PicklingError) in the parent; pass a module-level function that calls it")


@finding
class SentToProcess(Finding):
    """A tf.function, Dataset, SavedModel or Keras model sent through a route that pickles it, or
    inherited by a forked child."""

    noun: str  # "tf.function", "Keras model", ...
    state: str = shown()  # its code
    made_in: str | None  # the place in another module of the project that makes it
    to_manager: bool  # to a Manager's server process, not to a worker
    route: str = worded()
    happens: str = worded()
    remedy: str = worded()
    assumption: str = worded()

    @classmethod
    def of(cls, sent: outcomes.SentState, made_in: str | None) -> SentToProcess:
        return cls(STATE_NOUNS[sent.kind], sent.code, made_in, sent.to_manager, sent.route, sent.happens,
                   sent.remedy, sent.assumption)

    def message(self) -> str:
        made = f" (made in {self.made_in})" if self.made_in is not None else ""
        receiver = "the manager process" if self.to_manager else "a worker"
        return (f"{self.noun} `{self.state}`{made} sent to {receiver} by {self.route}: {self.happens}; "
                f"{self.remedy}{self.assumption}")


@finding
class ModelToForkedManager(Finding):
    """A Keras model sent to a Manager whose server was forked after the parent started TensorFlow."""

    model: str = shown()  # its code
    route: str = worded()
    started_line: int = shown()  # the call that started the runtime
    assumption: str = worded()

    @classmethod
    def of(cls, sent: outcomes.ModelToForkedManager) -> ModelToForkedManager:
        return cls(sent.code, sent.route, sent.started_line, sent.assumption)

    def message(self) -> str:
        return (f"{STATE_NOUNS[Kind.KERAS_MODEL]} `{self.model}` sent to the manager process by {self.route}: the "
                f"manager's server was forked after the parent started TensorFlow (line {self.started_line}) and "
                f"hangs rebuilding it; keep the model in one process and share arrays{self.assumption}")


@finding
class ReturnedByDaskTask(Finding):
    """A Keras model a Dask task returns where the module makes a distributed Client."""

    model: str = shown()
    task: str = shown()  # the task's callable
    line: int = shown()  # of the call that submits it

    @classmethod
    def of(cls, returned: dask.ReturnedModel) -> ReturnedByDaskTask:
        return cls(returned.code, returned.task, returned.line)

    def message(self) -> str:
        return (f"Keras model `{self.model}` returned by a Dask task (`{self.task}`, line {self.line}): Dask's own "
                "Keras serializer fails on it under Keras 3 (AttributeError '_updated_config'), so the client "
                "gets TypeError: Could not serialize object; save the model in the task and return its path, "
                "or return model.get_weights()")


@finding
class SharedWithRayTasks(Finding):
    """A Keras model handed to a Ray task submitted in a loop: each task loads its own copy."""

    model: str = shown()
    how: str  # "a Keras model", "ray.put of a Keras model", ...
    route: str = worded()

    @classmethod
    def of(cls, shared: ray_refs.SharedModel) -> SharedWithRayTasks:
        return cls(shared.code, shared.how, shared.route)

    def message(self) -> str:
        return (f"Keras model `{self.model}` ({self.how}) passed to {self.route} in a loop: "
                f"{ray_refs.MODEL_PER_TASK}; build it once per actor instead: a @ray.remote class that loads it "
                "(or takes its weights) in __init__, its method called in the loop")


class RuntimeStateCrossesProcess(Rule):
    code = "TFP102"
    name = "runtime-state-crosses-process"
    summary = "tf.function, Dataset, SavedModel or Keras model sent to a worker process"
    fix_availability = "sometimes"
    what_it_does = (
        "Checks for TensorFlow 2 runtime objects passed to another process by the same routes as "
        "TFP101: a `tf.function` (also as the pool callable itself), a `tf.data.Dataset`, the result "
        "of `tf.saved_model.load`, and a Keras model (built, compiled or loaded)."
    )
    why_bad = (
        "These objects hold live runtime state. A `tf.function` fails to pickle (`PicklingError`), "
        "a `Dataset` fails on its variant tensor (`InvalidArgumentError`), a loaded SavedModel "
        "fails with `AttributeError: Can't pickle local object`. A Keras 3 model does pickle, by "
        "serialising the whole model: through a pool that happens for every task, and a model with "
        "an unregistered custom layer makes the worker die while unpickling, after which "
        "`Pool.map` never returns. Under fork (`Process(args=...)`), nothing is pickled and the "
        "child's first use of the inherited object hangs."
    )
    fix_safety = (
        "Where the model is made by a loader call whose arguments are available in the parent "
        "(`load_model(path)`, `tf.saved_model.load(path)`), the fix rewrites to the initializer "
        "pattern: the worker builds the model once into a module global and receives only data. "
        "It is unsafe: what is pickled, what globals the workers see and their start-up cost "
        "change. Elsewhere, and for a worker defined in another module (the fix changes the worker, and "
        "fixes edit only the reported file): manual edit required."
    )
    evidence = (
        "A `tf.function` raises `PicklingError`, a `Dataset` `InvalidArgumentError` (variant tensor) "
        "and a loaded SavedModel `AttributeError: Can't pickle local object`, all in the parent. A "
        "Keras model sent to a fork pool hangs; under spawn it works but is rebuilt for every task "
        "(tens of tasks/s against hundreds with an initializer), and with an unregistered custom layer "
        "both workers die and the pool never returns. The auto-fixed spawn SavedModel scenario (one load "
        "per worker) runs; under fork the fix is refused, since forked workers that load the model after "
        "the parent started TensorFlow can hang."
    )
    references = (
        "https://github.com/tensorflow/tensorflow/issues/14442",
        "https://www.tensorflow.org/guide/function",
        "https://keras.io/guides/serialization_and_saving/",
    )
    engines = (
        "Ray, Dask and Spark pickle with cloudpickle, which sends a Keras 3 model, a loaded "
        "SavedModel and a tf.function that was never called: those are not reported when sent "
        "once. A tf.function already called in the driver (traced) fails (Ray: `Could not "
        "serialize the argument`; Dask: `Could not serialize object`), so does a Dataset; and "
        "`client.scatter` of a Keras model fails in Dask's own Keras serializer under Keras 3 "
        "(`AttributeError: '_updated_config'`), as does a Keras model a Dask task returns (a "
        "`@dask.delayed` function, `client.submit`) where the module makes a distributed `Client`. "
        "A Keras model handed to a Ray task submitted in a loop (as an argument, as the ObjectRef of "
        "`ray.put(model)` or of a task that returns a model) is reported too: Ray stores it once, but "
        "each task unpickles its own copy, which for a Keras 3 model is a full load (24 tasks: 24 "
        "copies; a 5 MB model: 16 tasks/s, against 562 with two actors that build it once). Handed to "
        "actor constructors or to one task, it is not. "
        "A Dataset a Ray task returns fails on its way back (`ray.get` raises "
        "`RayTaskError(InvalidArgumentError)`; measured, probe pair `tfp102_ray_returned_dataset_*`); a "
        "Keras model a Ray task returns comes back. "
        + engine_objects.RECEIVED + "Example (Dask):"
    )
    options = ("assume-start-method", "target-python")
    bad_examples = (
        Example(
            """\
            import multiprocessing as mp
            from concurrent.futures import ProcessPoolExecutor
            from functools import partial
            import tensorflow as tf

            def score(model, batch):
                return model.predict(batch)

            if __name__ == '__main__':
                model = tf.keras.models.load_model('model.keras')
                with ProcessPoolExecutor(2, mp_context=mp.get_context('spawn')) as ex:
                    list(ex.map(partial(score, model), batches))
            """,
            ("TFP102",),
            fixed="""\
            import multiprocessing as mp
            from concurrent.futures import ProcessPoolExecutor
            import tensorflow as tf

            _model = None


            def _init_model():
                global _model
                _model = tf.keras.models.load_model('model.keras')


            def score(batch):
                return _model.predict(batch)

            if __name__ == '__main__':
                with ProcessPoolExecutor(2, mp_context=mp.get_context('spawn'), initializer=_init_model) as ex:
                    list(ex.map(score, batches))
            """,
        ),
        Example(
            """\
            import multiprocessing as mp
            import tensorflow as tf

            @tf.function
            def step(x):
                return x * 2

            if __name__ == '__main__':
                with mp.get_context('spawn').Pool(2) as pool:
                    pool.map(step, [1.0, 2.0])
            """,
            ("TFP102",),
        ),
        Example(
            """\
            import tensorflow as tf
            from dask.distributed import Client

            if __name__ == '__main__':
                client = Client()
                model = tf.keras.models.load_model('model.keras')
                remote_model = client.scatter(model)
            """,
            ('TFP102',),
        ),
    )
    good_examples = (
        Example(
            """\
            from concurrent.futures import ProcessPoolExecutor
            import tensorflow as tf

            _model = None

            def init_worker(path):
                global _model
                _model = tf.keras.models.load_model(path)

            def score(batch):
                return _model.predict(batch)

            with ProcessPoolExecutor(2, initializer=init_worker, initargs=('model.keras',)) as ex:
                list(ex.map(score, batches))
            """
        ),
        Example(
            """\
            import multiprocessing as mp
            import tensorflow as tf

            if __name__ == '__main__':
                weights = tf.Variable([1.0, 2.0])
                with mp.get_context('spawn').Pool(2) as pool:
                    pool.map(print, [weights.numpy()])
            """
        ),
        Example(
            """\
            import tensorflow as tf
            from dask.distributed import Client, WorkerPlugin, get_worker

            class LoadModel(WorkerPlugin):
                def setup(self, worker):
                    worker.model = tf.keras.models.load_model('model.keras')

            def score(batch):
                return get_worker().model.predict(batch)

            if __name__ == '__main__':
                client = Client()
                client.register_plugin(LoadModel())
                client.gather(client.map(score, batches))
            """
        ),
    )

    def check_crossing(self, crossing, analysis):
        if engines.is_engine(crossing):
            yield from self._engine(crossing, analysis)
            return
        for node, value in analysis.sent_state(crossing):
            if value.kind in TF2_STATE:
                made = value.provenance.place  # in another module of the project
                sent = outcomes.sent_state(analysis, crossing, node, value.kind)
                if sent is not None:
                    finding = SentToProcess.of(sent, str(made) if made is not None else None) \
                        if isinstance(sent, outcomes.SentState) else ModelToForkedManager.of(sent)
                    fix = LoadStateInWorker(crossing, node) if crossing.pickled is Pickling.ALWAYS else None
                    yield Report(node, finding, fix=fix,
                                 related=((made, "made here"),) if made is not None else ())
        method, _ = analysis.start_method(crossing.owner)
        if crossing.callable is not None and outcomes.is_pickled(crossing, method):
            worker = analysis.worker(crossing.callable, crossing.callable_scope, crossing.site.order)
            if worker.kind is WorkerKind.TF_FUNCTION:
                value = analysis.classifier.classify(crossing.callable, crossing.callable_scope, crossing.site.order)
                made = value.provenance.place
                yield Report(
                    crossing.callable,
                    TFFunctionAsCallable(analysis.code(crossing.callable, 30),
                                         str(made) if made is not None else None, str(crossing.route)),
                    related=((made, "made here"),) if made is not None else (),
                )

    @staticmethod
    def _engine(crossing, analysis):
        """Ray, Dask, Spark: cloudpickle sends a Keras model, a SavedModel and an untraced
        tf.function; a traced tf.function and a Dataset fail in the driver."""
        for node, value in analysis.sent_state(crossing):
            if value.kind in TF2_STATE:
                failed = engines.sent_state(analysis, crossing, node, value)
                if failed is not None:
                    yield Report(node, SentToEngine.of(failed))
        for node, returned in engines.returned_keras_models(analysis, crossing):
            yield Report(node, ReturnedByDaskTask.of(returned))
        for node, shared in ray_refs.shared_models(analysis, crossing):
            yield Report(node, SharedWithRayTasks.of(shared))
        for node, returned in ray_returns.returned_state(analysis, crossing, TF2_STATE):
            yield Report(node, ReturnedByRayTask.of(returned))
        if crossing.callable is None:
            return
        value = analysis.classifier.classify(crossing.callable, crossing.callable_scope, crossing.site.order)
        if value.kind is Kind.TF_FUNCTION:
            failed = engines.sent_state(analysis, crossing, crossing.callable, value)
            if failed is not None:
                yield Report(crossing.callable, SentToEngine.of(failed))
