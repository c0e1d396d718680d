"""TFP101: a TF1 session or graph object is sent to another process."""

from __future__ import annotations

from tfproc_lint.analysis import engines, outcomes
from tfproc_lint.analysis.kinds import TF1_STATE
from tfproc_lint.rules.base import Example, Report, Rule


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
        "that builds the session once. Example (Ray):"
    )
    bad_examples = (
        Example(
            "import multiprocessing as mp\n"
            "import tensorflow.compat.v1 as tf\n\n"
            "def infer(sess, row):\n"
            "    return sess.run('y:0', {'x:0': row})\n\n"
            "sess = tf.Session()\n"
            "with mp.Pool(2) as pool:\n"
            "    pool.starmap(infer, [(sess, row) for row in rows])\n",
            ("TFP101",),
        ),
        Example(
            "from multiprocessing import Process, Queue\n"
            "import tensorflow as tf\n\n"
            "with tf.compat.v1.Session() as sess:\n"
            "    q = Queue()\n"
            "    q.put(sess)\n",
            ("TFP101",),
        ),
        Example(
            'import ray\n'
            'import tensorflow.compat.v1 as tf\n'
            '\n'
            '@ray.remote\n'
            'def score(sess, batch):\n'
            "    return sess.run('y:0', {'x:0': batch})\n"
            '\n'
            "if __name__ == '__main__':\n"
            '    sess = tf.Session()\n'
            '    ray.get([score.remote(sess, b) for b in batches])\n',
            ('TFP101',),
        ),
    )
    good_examples = (
        Example(
            "import multiprocessing as mp\n"
            "import tensorflow.compat.v1 as tf\n\n"
            "_sess = None\n\n"
            "def init_worker(graph_path):\n"
            "    global _sess\n"
            "    _sess = tf.Session(graph=load_graph(graph_path))\n\n"
            "def infer(row):\n"
            "    return _sess.run('y:0', {'x:0': row})\n\n"
            "if __name__ == '__main__':\n"
            "    with mp.get_context('spawn').Pool(2, initializer=init_worker, initargs=('g.pb',)) as pool:\n"
            "        pool.map(infer, rows)\n"
        ),
        Example(
            "import multiprocessing as mp\n"
            "import tensorflow.compat.v1 as tf\n\n"
            "sess = None\n"
            "mp.Process(target=work, args=(sess,)).start()\n"
        ),
        Example(
            'import ray\n'
            'import tensorflow.compat.v1 as tf\n'
            '\n'
            '@ray.remote\n'
            'class Scorer:\n'
            '    def __init__(self, graph_path):\n'
            '        self.sess = tf.Session(graph=load_graph(graph_path))\n'
            '\n'
            '    def score(self, batch):\n'
            "        return self.sess.run('y:0', {'x:0': batch})\n"
            '\n'
            "if __name__ == '__main__':\n"
            "    scorer = Scorer.remote('frozen.pb')\n"
            '    ray.get([scorer.score.remote(b) for b in batches])\n'
        ),
    )

    def check_crossing(self, crossing, analysis):
        for node, value in analysis.sent_state(crossing):
            if value.kind in TF1_STATE:
                if engines.is_engine(crossing):  # Ray, Dask, Spark: cloudpickle in the driver
                    message = engines.sent_state_message(analysis, crossing, node, value)
                    if message is not None:
                        yield Report(node, message)
                    continue
                message = outcomes.sent_state_message(analysis, crossing, node, value.kind)
                if message is not None:
                    yield Report(node, message)
