"""TFP101: a TF1 session or graph object is sent to another process."""

from __future__ import annotations

from tfproc_lint.analysis import engine_objects, engines, outcomes
from tfproc_lint.analysis.engines import ray_returns
from tfproc_lint.analysis.kinds import STATE_NOUNS, TF1_STATE
from tfproc_lint.rules.base import Example, Finding, Report, Rule, finding, shown, worded
from tfproc_lint.rules.state_findings import ReturnedByRayTask, SentToEngine


@finding
class SentToProcess(Finding):
    """A session or graph sent through a route that pickles it, or inherited by a forked child."""

    noun: str  # "TensorFlow session", "TF1 graph object"
    state: str = shown()  # its code
    to_manager: bool  # to a Manager's server process, not to a worker
    route: str = worded()
    happens: str = worded()
    remedy: str = worded()
    assumption: str = worded()

    @classmethod
    def of(cls, sent: outcomes.SentState) -> SentToProcess:
        return cls(STATE_NOUNS[sent.kind], sent.code, sent.to_manager, sent.route, sent.happens, sent.remedy,
                   sent.assumption)

    def message(self) -> str:
        receiver = "the manager process" if self.to_manager else "a worker"
        return (f"{self.noun} `{self.state}` sent to {receiver} by {self.route}: {self.happens}; "
                f"{self.remedy}{self.assumption}")


class SessionCrossesProcess(Rule):
    code = "TFP101"
    name = "session-crosses-process"
    summary = "TF1 session or graph object sent to a worker process"
    fix_availability = "none"
    what_it_does = (
        "Checks for a `tf.compat.v1.Session` (also `tf.Session`, `InteractiveSession`, "
        "`MonitoredSession`) or a TF1 graph object (`tf.Graph`, placeholders and graph tensors, "
        "`tf.train.Saver`) passed to another process: `Process(args=...)`, the task arguments of "
        "`Pool.map`/`starmap`/`apply_async`/..., `Pool(initargs=...)`, "
        "`ProcessPoolExecutor.submit`/`map`/`initargs`, `functools.partial` around the worker, "
        "`Queue.put`, `Pipe()` connections and Manager proxies (also in a child given the proxy "
        "through `Process(args=...)`), with the pools of multiprocess and pathos "
        "(`pathos.multiprocessing.Pool` is multiprocess's pool)."
    )
    why_bad = (
        "A session wraps native threads, device handles and C++ graph state. It cannot be pickled, "
        "so every route that pickles (pool tasks, executors, queues, pipes, and `Process` under the "
        "spawn and forkserver start methods) fails with `TypeError: cannot pickle ...`; with "
        "`multiprocessing.Queue` the error happens in a background feeder thread, is only printed, "
        "and the consumer waits forever. Under fork nothing is pickled: the child inherits the "
        "session, and its first `sess.run` hangs because TensorFlow's thread pools do not survive "
        "`fork()` (tensorflow/tensorflow#2448: the session \"is not designed to be fork()-safe\")."
    )
    known_problems = (
        "A bare `tf.Graph` inherited through fork works when the parent never ran a session, so "
        "it is reported only on routes that pickle it."
    )
    fix_safety = (
        "No automatic fix: the graph a session runs is usually built in the parent, and moving it "
        "into the worker is a design change (manual edit required). Build the graph and the "
        "session inside each worker, once, with `Pool(initializer=...)`, and send only arrays."
    )
    evidence = (
        "`Pool.starmap`, `ProcessPoolExecutor.submit` and a spawn `Process(args=(sess,))` raise "
        "`TypeError: cannot pickle 'Graph' object` in the parent; under fork, `Process(args=(sess,))` "
        "hangs in the child's `sess.run`; `pathos.multiprocessing.Pool.starmap` with a `tf.Graph` "
        "raises the same TypeError in the parent, and a child appending its session to a "
        "`Manager().list()` raises it in the child; the twins that build one session per worker "
        "return the right result."
    )
    references = (
        "https://github.com/tensorflow/tensorflow/issues/2448",
        "https://github.com/tensorflow/tensorflow/issues/8220",
        "https://docs.python.org/3/library/multiprocessing.html#the-spawn-and-forkserver-start-methods",
    )
    engines = (
        "Ray, Dask and Spark serialise task arguments, `ray.put`, `client.scatter`, `sc.broadcast` "
        "and what task functions capture with cloudpickle in the driver: a session or graph there "
        "fails with the engine's own error (Ray: `TypeError: Could not serialize the argument "
        "<...Session>`; Spark: `PicklingError: Could not serialize object: TypeError: cannot pickle "
        "'Graph' object`). The fix is the engine's: an actor (Ray) or a partition function (Spark) "
        "that builds the session once. A session or graph a Ray task returns fails on its way back: "
        "`ray.get` raises `RayTaskError(TypeError): cannot pickle 'Graph' object` (measured). "
        + engine_objects.RECEIVED + "Example (Ray):"
    )
    options = ("assume-start-method", "target-python")
    bad_examples = (
        Example(
            """\
            import multiprocessing as mp
            import tensorflow.compat.v1 as tf

            def infer(sess, row):
                return sess.run('y:0', {'x:0': row})

            sess = tf.Session()
            with mp.Pool(2) as pool:
                pool.starmap(infer, [(sess, row) for row in rows])
            """,
            ("TFP101",),
        ),
        Example(
            """\
            from multiprocessing import Process, Queue
            import tensorflow as tf

            with tf.compat.v1.Session() as sess:
                q = Queue()
                q.put(sess)
            """,
            ("TFP101",),
        ),
        Example(
            """\
            import ray
            import tensorflow.compat.v1 as tf

            @ray.remote
            def score(sess, batch):
                return sess.run('y:0', {'x:0': batch})

            if __name__ == '__main__':
                sess = tf.Session()
                ray.get([score.remote(sess, b) for b in batches])
            """,
            ('TFP101',),
        ),
    )
    good_examples = (
        Example(
            """\
            import multiprocessing as mp
            import tensorflow.compat.v1 as tf

            _sess = None

            def init_worker(graph_path):
                global _sess
                _sess = tf.Session(graph=load_graph(graph_path))

            def infer(row):
                return _sess.run('y:0', {'x:0': row})

            if __name__ == '__main__':
                with mp.get_context('spawn').Pool(2, initializer=init_worker, initargs=('g.pb',)) as pool:
                    pool.map(infer, rows)
            """
        ),
        Example(
            """\
            import multiprocessing as mp
            import tensorflow.compat.v1 as tf

            sess = None
            mp.Process(target=work, args=(sess,)).start()
            """
        ),
        Example(
            """\
            import ray
            import tensorflow.compat.v1 as tf

            @ray.remote
            class Scorer:
                def __init__(self, graph_path):
                    self.sess = tf.Session(graph=load_graph(graph_path))

                def score(self, batch):
                    return self.sess.run('y:0', {'x:0': batch})

            if __name__ == '__main__':
                scorer = Scorer.remote('frozen.pb')
                ray.get([scorer.score.remote(b) for b in batches])
            """
        ),
    )

    def check_crossing(self, crossing, analysis):
        for node, value in analysis.sent_state(crossing):
            if value.kind in TF1_STATE:
                if engines.is_engine(crossing):  # Ray, Dask, Spark: cloudpickle in the driver
                    failed = engines.sent_state(analysis, crossing, node, value)
                    if failed is not None:
                        yield Report(node, SentToEngine.of(failed))
                    continue
                sent = outcomes.sent_state(analysis, crossing, node, value.kind)
                if isinstance(sent, outcomes.SentState):  # not ModelToForkedManager: a Keras model's
                    yield Report(node, SentToProcess.of(sent))
        for node, returned in ray_returns.returned_state(analysis, crossing, TF1_STATE):
            yield Report(node, ReturnedByRayTask.of(returned))
