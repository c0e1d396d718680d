"""TFP103: the worker callable carries TensorFlow state in its object or closure."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from tfproc_lint.analysis import engine_objects, engines, outcomes
from tfproc_lint.analysis.walk import iter_tree, read_names
from tfproc_lint.analysis.kinds import STATE, STATE_NOUNS, Kind
from tfproc_lint.analysis.project_names import Place
from tfproc_lint.analysis.routes import RouteKind
from tfproc_lint.analysis.symbols import ClassInfo
from tfproc_lint.analysis.values import merge
from tfproc_lint.analysis.workers import WorkerKind
from tfproc_lint.rules.base import Example, Finding, Report, Rule, finding, shown, worded


@dataclass(frozen=True)
class Holder:
    """What holds the state, as the message words it: `words`, the quoted name, then `tail`
    ("a closure whose captured `model`")."""

    words: str
    name: str = shown()
    tail: str = ""

    def __str__(self) -> str:
        return f"{self.words} `{self.name}`{self.tail}"


@finding
class CapturedState(Finding):
    """A bound method, closure or lambda given to a process whose object or closure holds state."""

    worker: str = shown()  # its code, or "lambda"
    route: str = worded()
    holder: Holder
    noun: str
    happens: str = worded()
    assumption: str = worded()

    def message(self) -> str:
        return (f"`{self.worker}` given to {self.route} is {self.holder} holds a {self.noun}: {self.happens}; use a "
                f"module-level function that builds it in the worker{self.assumption}")


@finding
class ImportedObjectState(Finding):
    """A bound method of an object whose class, in another module of the project, leaves state in it."""

    worker: str = shown()
    route: str = worded()
    class_name: str
    attribute: str = shown()
    noun: str
    place: str  # where that module sets the attribute
    happens: str = worded()
    assumption: str = worded()

    def message(self) -> str:
        return (f"`{self.worker}` given to {self.route} is a bound method of {self.class_name}, whose "
                f"`self.{self.attribute}` holds a {self.noun} ({self.place}): {self.happens}; use a module-level "
                f"function that builds it in the worker{self.assumption}")


@finding
class BoundModelPerTask(Finding):
    """An engine task that is a bound method of a Keras model: the model travels with every task."""

    worker: str = shown()
    route: str = worded()
    model: str = shown()

    def message(self) -> str:
        return (f"`{self.worker}` given to {self.route} is a bound method of the Keras model `{self.model}`: "
                f"{engines.BOUND_MODEL_PER_TASK}; {engines.REMEDIES['dask']}")


@finding
class EngineCapturedState(Finding):
    """An engine task whose object, closure or globals hold state the engine pickles with it."""

    worker: str = shown()
    route: str = worded()
    holder: Holder
    noun: str
    engine: str  # the engine's noun ("Ray", "Dask's client")
    happens: str = worded()
    remedy: str = worded()

    def message(self) -> str:
        return (f"`{self.worker}` given to {self.route} is {self.holder} holds a {self.noun}, which "
                f"{self.engine} pickles with it: {self.happens}; {self.remedy}")


@finding
class ProcessSubclassState(Finding):
    """A Process subclass whose __init__ builds state in the parent."""

    class_name: str
    noun: str
    attribute: str = shown()
    happens: str = worded()
    assumption: str = worded()

    def message(self) -> str:
        return (f"Process subclass {self.class_name} builds a {self.noun} in `self.{self.attribute}` in the "
                f"parent: {self.happens}; build it in run(), which runs in the child{self.assumption}")


class StateCapturedByWorker(Rule):
    code = "TFP103"
    name = "state-captured-by-worker"
    summary = "worker callable is a bound method, closure or lambda holding TensorFlow state"
    what_it_does = (
        "Checks the process target or pool callable: a bound method whose object holds a session or "
        "model in an attribute set while it is constructed (`Process(target=self.run)` with "
        "`self.sess = tf.compat.v1.Session()` in `__init__`), or a closure or lambda whose enclosing "
        "function holds one; sent with the standard pickler, also a closure or lambda that uses a "
        "module-level global holding one (`executor.submit(lambda x: model.predict(x), x)`). With "
        "project analysis, also a bound method of an object made here from a class of another "
        "module of the project whose constructor stores state whatever its arguments (that "
        "module's summary); the message names the file and line where the attribute is set."
    )
    why_bad = (
        "The state travels implicitly. Pickling a bound method pickles its whole object, so a pool "
        "(or spawn) fails on the session inside it, or serialises the whole Keras model for every "
        "task; closures and lambdas cannot be pickled at all. Under fork, a `Process` target is not "
        "pickled: the child inherits the object and hangs on the first use of the session or model."
        " A lambda or closure never pickles with pickle, whatever it uses: the task fails "
        "(`Can't pickle local object`, a `PicklingError` for a lambda made at module level), even "
        "under fork, since pools and executors pickle every task."
    )
    known_problems = (
        "Only attributes assigned in `__init__` (and the methods it calls) count, since those run "
        "in the parent; state created later, inside the worker, is fine and not reported."
    )
    fix_safety = (
        "No automatic fix (manual edit required): make the worker a module-level function or a "
        "staticmethod, and build the state inside the worker once, e.g. with `Pool(initializer=...)`."
    )
    evidence = (
        "`Pool.map(self.predict, rows)` with `self.sess` a session raises `TypeError: cannot pickle "
        "'Graph' object` in the parent; `Process(target=self.serve)` under fork hangs; a lambda over a "
        "module-level Keras model submitted to a spawn `ProcessPoolExecutor` raises `AttributeError: "
        "Can't pickle local object` at `result()`; a staticmethod worker with an initializer returns "
        "the right result. Dask, `LocalCluster(processes=True)`: `client.map(model.predict, chunks)` loads "
        "the model once per task: with a 21 MB model, 2 tasks/s against 11 for a task function that loads it "
        "once per worker (with an 18 KB model, 5 against 6)."
    )
    references = (
        "https://docs.python.org/3/library/multiprocessing.html#programming-guidelines",
        "https://github.com/tensorflow/tensorflow/issues/2448",
    )
    engines = (
        "Ray, Dask and Spark pickle a function of the driver's script by value, with the globals it "
        "reads, and a closure or lambda with what it captures: a session, a Dataset or a traced "
        "tf.function there fails in the driver (Ray: `Could not serialize the function`; Spark: "
        "`PicklingError: Could not serialize object`). A function of an importable module is sent "
        "by reference and is not reported. Dask: the bound method of a Keras model made in the driver "
        "(`client.map(model.predict, chunks)`, `client.submit` or `dask.delayed(model.predict)` in a loop) "
        "runs, but each task carries the whole model and loads its own copy on the worker (measured: 10 "
        "tasks, 10 loads); a model subclass defined in the script fails there (`TypeError: Could not "
        "locate class`). "
        + engine_objects.RECEIVED + "Example (Spark):"
    )
    options = ("assume-start-method", "target-python")
    bad_examples = (
        Example(
            """\
            import multiprocessing as mp
            import tensorflow as tf

            class Agent:
                def __init__(self):
                    self.sess = tf.compat.v1.Session()

                def act(self, obs):
                    return self.sess.run('pi:0', {'obs:0': obs})

                def rollout(self, observations):
                    with mp.Pool(4) as pool:
                        return pool.map(self.act, observations)
            """,
            ("TFP103", "TFP201"),
        ),
        Example(
            """\
            import tensorflow.compat.v1 as tf
            from pyspark import SparkContext

            sess = tf.Session()

            def predict(rows):
                for row in rows:
                    yield sess.run('y:0', {'x:0': [row]})

            if __name__ == '__main__':
                sc = SparkContext('local[2]')
                sc.parallelize(rows, 2).mapPartitions(predict).collect()
            """,
            ('TFP103',),
        ),
        Example(
            """\
            import numpy as np
            import tensorflow as tf
            from dask.distributed import Client

            if __name__ == '__main__':
                client = Client(n_workers=2)
                model = tf.keras.models.load_model('model.keras')
                chunks = np.array_split(np.load('rows.npy'), 64)
                scores = client.gather(client.map(model.predict, chunks))
            """,
            ('TFP103',),
        ),
    )
    good_examples = (
        Example(
            """\
            import multiprocessing as mp
            import tensorflow as tf

            class Agent:
                def __init__(self):
                    self.sess = tf.compat.v1.Session()

                @staticmethod
                def act(obs):
                    return obs * 2

                def rollout(self, observations):
                    with mp.Pool(4) as pool:
                        return pool.map(self.act, observations)
            """
        ),
        Example(
            """\
            import tensorflow.compat.v1 as tf
            from pyspark import SparkContext

            def predict(rows):
                with tf.Session(graph=load_graph('frozen.pb')) as sess:
                    for row in rows:
                        yield sess.run('y:0', {'x:0': [row]})

            if __name__ == '__main__':
                sc = SparkContext('local[2]')
                sc.parallelize(rows, 2).mapPartitions(predict).collect()
            """
        ),
    )

    def check_crossing(self, crossing, analysis):
        if crossing.owner.kind is Kind.PROCESS and isinstance(crossing.owner.info, ClassInfo):
            yield from self._process_subclass(crossing, analysis)
        if crossing.callable is None:
            return
        if engines.is_engine(crossing):
            yield from self._engine(crossing, analysis)
            return
        worker = analysis.worker(crossing.callable, crossing.callable_scope, crossing.site.order)
        method, why = analysis.start_method(crossing.owner)
        pickled = outcomes.is_pickled(crossing, method)
        if worker.imported_constructor is not None:
            yield from self._imported_object(crossing, analysis, worker, method, why, pickled)
            return
        if worker.kind is WorkerKind.METHOD and worker.instance_class is not None:
            held = [(attribute, value, outcomes.outcome(value.kind, crossing, method))
                    for attribute, value in analysis.state_attributes(worker.instance_class, crossing.site,
                                                                      worker.instance_origin)]
            held = [entry for entry in held if entry[2] is not None]
            if not held:
                return
            if not pickled and not (analysis.tf.function_runs(worker.function)
                                    or _calls_held_state(worker, {name for name, _, _ in held}, analysis)):
                return  # a forked child that runs no TensorFlow is fine, whatever its object holds
            attribute, value, happens = held[0]
            what = Holder(f"a bound method of {worker.instance_class.node.name.value}, whose", f"self.{attribute}")
        elif worker.kind in (WorkerKind.CLOSURE, WorkerKind.LAMBDA):
            # dill and cloudpickle pickle lambdas and closures, and what they capture with them;
            # pickle stores a function by name and refuses both, whatever state they use.
            by_value = crossing.owner.pickles_by_value
            captured = self._captured_state(worker, analysis, module_level=pickled and not by_value)
            if captured is None:
                return
            name, value, scope = captured
            kind = "lambda" if worker.kind is WorkerKind.LAMBDA else "closure"
            what = (Holder(f"a {kind} using the module-level", name, ", which") if scope.kind == "module"
                    else Holder(f"a {kind} whose captured", name))
            if by_value:
                happens = outcomes.outcome(value.kind, crossing, method) or outcomes.FORK_HANG
            elif pickled:
                local = worker.kind is WorkerKind.CLOSURE or _inside_function(worker.scope.parent)
                error = "AttributeError: Can't pickle local object" if local else "PicklingError: Can't pickle a lambda"
                happens = f"pickling fails ({error}) {outcomes.where_raised(crossing)}"
            else:
                happens = outcomes.FORK_HANG
        else:
            return
        noun = STATE_NOUNS[value.kind]
        label = "lambda" if isinstance(crossing.callable, cst.Lambda) else analysis.code(crossing.callable, 30)
        route = "Process(target=...)" if crossing.route.kind is RouteKind.PROCESS_ARGS else crossing.route
        yield Report(crossing.callable,
                     CapturedState(label, str(route), what, noun, happens, outcomes.assumption(crossing, method, why)))

    @staticmethod
    def _imported_object(crossing, analysis, worker, method: str, why: str, pickled: bool):
        """A bound method of an object whose class is in another module of the project: what its
        constructor leaves in the object (that module's summary) travels with every task."""
        constructor = worker.imported_constructor
        held = [(attribute, Kind(kind), line) for attribute, kind, line in constructor.holds]
        held = [(attribute, kind, line, outcomes.outcome(kind, crossing, method)) for attribute, kind, line in held]
        held = [entry for entry in held if entry[3] is not None]
        if not held or not (pickled or (worker.imported is not None and worker.imported.runs_tf)):
            return  # nothing held that fails, or a forked child that runs no TensorFlow
        attribute, kind, line, happens = held[0]
        place = Place(constructor.place.path, line)
        route = "Process(target=...)" if crossing.route.kind is RouteKind.PROCESS_ARGS else crossing.route
        yield Report(
            crossing.callable,
            ImportedObjectState(analysis.code(crossing.callable, 30), str(route), constructor.name.split('.')[0],
                                attribute, STATE_NOUNS[kind], str(place), happens,
                                outcomes.assumption(crossing, method, why)),
            related=((place, f"`self.{attribute}` set here"),),
            manual=f"the class is defined in {constructor.place}",
        )

    def _engine(self, crossing, analysis):
        """Ray, Dask, Spark pickle a `__main__` function by value with the globals it reads, a
        closure with what it captures and a bound method with its object (cloudpickle)."""
        model = engines.bound_model_per_task(analysis, crossing)
        if model is not None:
            label = analysis.code(crossing.callable, 30)
            yield Report(crossing.callable, BoundModelPerTask(label, str(crossing.route), analysis.code(model, 30)))
            return
        worker = engines.task_worker(analysis, crossing)
        captured = None
        if worker.kind is WorkerKind.METHOD and worker.instance_class is not None:
            for attribute, value in analysis.state_attributes(worker.instance_class, crossing.site,
                                                              worker.instance_origin):
                if engines.crossing_failure(analysis, crossing, crossing.callable, value):
                    captured = (Holder(f"a bound method of {worker.instance_class.node.name.value}, whose",
                                       f"self.{attribute}"), value)
                    break
        elif worker.kind in (WorkerKind.CLOSURE, WorkerKind.LAMBDA, WorkerKind.FUNCTION):
            found = self._captured_state(worker, analysis) if worker.kind is not WorkerKind.FUNCTION else None
            if found is not None and engines.crossing_failure(analysis, crossing, crossing.callable, found[1]):
                captured = (Holder(f"a {worker.kind.value} whose captured", found[0]), found[1])
            else:
                body, scope = (worker.lambda_node.body, worker.scope) if worker.kind is WorkerKind.LAMBDA \
                    else (worker.function.node.body, worker.function.scope)
                found = engines.captured_globals(analysis, crossing, body, scope)
                if found is not None:
                    kind = "lambda" if worker.kind is WorkerKind.LAMBDA else "function"
                    captured = (Holder(f"a {kind} whose global", found[0].value), found[1])
        if captured is None:
            return
        what, value = captured
        name = engines.engine(crossing)
        happens = engines.crossing_failure(analysis, crossing, crossing.callable, value, captured=True)
        label = "lambda" if isinstance(crossing.callable, cst.Lambda) else analysis.code(crossing.callable, 30)
        yield Report(crossing.callable, EngineCapturedState(label, str(crossing.route), what, STATE_NOUNS[value.kind],
                                                            engines.ENGINE_NOUNS[name], happens,
                                                            engines.REMEDIES[name]))

    @staticmethod
    def _process_subclass(crossing, analysis):
        """`class Worker(mp.Process)` whose __init__ builds state: the object is the worker."""
        klass = crossing.owner.info
        held = analysis.state_attributes(klass)
        if not held:
            return
        attribute, value = held[0]
        method, why = analysis.start_method(crossing.owner)
        noun = STATE_NOUNS[value.kind]
        happens = outcomes.outcome(value.kind, crossing, method) or outcomes.FORK_HANG
        yield Report(crossing.call, ProcessSubclassState(klass.node.name.value, noun, attribute, happens,
                                                         outcomes.assumption(crossing, method, why)))

    @staticmethod
    def _captured_state(worker, analysis, module_level=False):
        """A name the closure or lambda reads from an enclosing function (with `module_level`, also
        a module global), bound to TF state (any of the name's bindings there: the closure may run
        after any of them), with the scope that binds it."""
        if worker.kind is WorkerKind.LAMBDA:
            body, own_scope = worker.lambda_node.body, worker.scope
        else:
            body, own_scope = worker.function.node.body, worker.function.scope
        symbols = analysis.symbols
        for name in read_names(body):
            owner = symbols.resolving_scope(name.value, own_scope)
            kinds = ("function", "lambda", "module") if module_level else ("function", "lambda")
            if owner is None or owner is own_scope or owner.kind not in kinds:
                continue
            enclosing = analysis.function_of(owner)
            if enclosing is not None and name.value == enclosing.self_name:
                klass = enclosing.class_info
                held = dict(analysis.state_attributes(klass)) if klass else {}
                for attribute in _self_attributes(body, name.value):
                    if attribute in held:
                        return f"{name.value}.{attribute}", held[attribute], owner
                continue
            value = merge(analysis.classifier.classify_binding(b) for b in owner.bindings[name.value])
            if value.kind in STATE:
                return name.value, value, owner
        return None


def _inside_function(scope) -> bool:
    """Made inside a function: pickle calls it a local object."""
    while scope is not None and scope.kind != "module":
        if scope.kind in ("function", "lambda"):
            return True
        scope = scope.parent
    return False


def _calls_held_state(worker, held: set[str], analysis) -> bool:
    """The method calls the state its object holds (`self.sess.run(...)`, `self.model(x)`), not
    only reads it (`self.model.built`); a `build()` under `if not self.model.built:` does not count."""
    self_name = worker.function.self_name
    for node in iter_tree(worker.function.node.body):
        if not isinstance(node, cst.Call) or analysis.tf.only_if_unbuilt(node):
            continue
        target = node.func.value if isinstance(node.func, cst.Attribute) else None
        for candidate in (node.func, target):
            if isinstance(candidate, cst.Attribute) and isinstance(candidate.value, cst.Name) \
                    and candidate.value.value == self_name and candidate.attr.value in held:
                return True
    return False


def _self_attributes(node: cst.CSTNode, self_name: str) -> list[str]:
    return [n.attr.value for n in iter_tree(node)
            if isinstance(n, cst.Attribute) and isinstance(n.value, cst.Name) and n.value.value == self_name]
