"""The contracts between the analysis, the rules and the front ends are data, not display text:
routes and workers have kinds, a finding's fix state is a field that only the output renders, and
FileAnalysis answers "what is this node" and "which loops run it" without (scope, order)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from tfproc_lint.analysis.file_analysis import FileAnalysis
from tfproc_lint.analysis.kinds import Kind
from tfproc_lint.analysis.routes import Route, RouteKind
from tfproc_lint.analysis.workers import WorkerKind
from tfproc_lint.config import Config
from tfproc_lint.diagnostics import Diagnostic
from tfproc_lint.engine import lint_source
from tfproc_lint.rules.base import FixAvailability, Rule


def analyse(source: str) -> FileAnalysis:
    return FileAnalysis(cst.parse_module(textwrap.dedent(source)), "job.py", Config())


def call_named(analysis: FileAnalysis, text: str) -> cst.Call:
    return next(site.node for site in analysis.symbols.calls if analysis.module.code_for_node(site.node) == text)


ROUTES = """
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    class Worker(mp.Process):
        pass

    def work(x):
        return x

    if __name__ == "__main__":
        queue = mp.Queue()
        manager = mp.Manager()
        shared = manager.list()
        parent, child = mp.Pipe()
        with mp.Pool(2, initializer=work, initargs=(1,)) as pool:
            pool.map(work, [1])
            pool.apply_async(work, (1,))
        with ProcessPoolExecutor(initializer=work, initargs=(1,)) as executor:
            executor.submit(work, 1)
        mp.Process(target=work, args=(1,)).start()
        Worker(1).start()
        queue.put(1)
        manager.Queue().put(1)
        shared.append(1)
        parent.send(1)
"""


def test_routes_have_a_kind_and_keep_their_text() -> None:
    analysis = analyse(ROUTES)
    found = {(c.route.kind, c.route.method, c.route.text, c.route.submits_one_task) for c in analysis.crossings}
    assert found == {
        (RouteKind.INITARGS, "", "Pool(initargs=...)", False),
        (RouteKind.POOL_TASK, "map", "Pool.map", False),
        (RouteKind.POOL_TASK, "apply_async", "Pool.apply_async", True),
        (RouteKind.INITARGS, "", "ProcessPoolExecutor(initargs=...)", False),
        (RouteKind.EXECUTOR_TASK, "submit", "ProcessPoolExecutor.submit", True),
        (RouteKind.PROCESS_ARGS, "", "Process(args=...)", False),
        (RouteKind.PROCESS_SUBCLASS, "", "Worker(...)", False),
        (RouteKind.QUEUE_PUT, "put", "Queue.put", False),
        (RouteKind.QUEUE_PUT, "put", "Manager Queue.put", False),
        (RouteKind.PROXY_CALL, "append", "Manager proxy .append()", False),
        (RouteKind.CONNECTION_SEND, "send", "Connection.send", False),
    }
    assert str(Route(RouteKind.PROXY_STORE)) == "Manager proxy [...] ="  # messages format the route


def test_workers_have_a_kind() -> None:
    analysis = analyse("""
        import multiprocessing as mp

        def work(x):
            return x

        def outer():
            def inner(x):
                return x
            return inner

        class Model:
            def run(self, x):
                return x

        if __name__ == "__main__":
            model = Model()
            with mp.Pool(2) as pool:
                pool.map(work, [1])
                pool.map(lambda x: x, [1])
                pool.map(model.run, [1])
                pool.map(outer(), [1])
                pool.map(getattr(model, "run"), [1])
    """)
    workers = [(c.callable, analysis.worker(c.callable, c.callable_scope, c.site.order)) for c in analysis.crossings]
    kinds = {analysis.module.code_for_node(node): worker.kind for node, worker in workers}
    assert kinds == {"work": WorkerKind.FUNCTION, "lambda x: x": WorkerKind.LAMBDA, "model.run": WorkerKind.METHOD,
                     "outer()": WorkerKind.CLOSURE, 'getattr(model, "run")': WorkerKind.UNKNOWN}


def test_fix_availability_is_an_enum_and_a_rule_may_give_its_value() -> None:
    class Example(Rule):
        code = "TFP999"
        fix_availability = "sometimes"

    assert Example.fix_availability is FixAvailability.SOMETIMES
    with pytest.raises(ValueError):
        type("Typo", (Rule,), {"code": "TFP998", "fix_availability": "sometime"})


@pytest.mark.parametrize(("manual_edit", "shown"), [
    (None, "a session crosses"),
    ("", "a session crosses (manual edit required)"),
    ("the pool has an initializer already", "a session crosses (manual edit required: the pool has an initializer "
                                            "already)"),
])
def test_the_fix_state_is_rendered_only_for_output(manual_edit, shown) -> None:
    diagnostic = Diagnostic("TFP101", "a session crosses", "job.py", 1, 0, manual_edit=manual_edit)
    assert diagnostic.message == "a session crosses"
    assert diagnostic.full_message == diagnostic.to_dict()["message"] == shown


def test_the_engine_keeps_the_refusal_out_of_the_message() -> None:
    source = textwrap.dedent("""
        import multiprocessing as mp
        import tensorflow as tf

        def work(sess, x):
            return sess.run(x)

        if __name__ == "__main__":
            sess = tf.compat.v1.Session()
            with mp.Pool(2) as pool:
                pool.starmap(work, [(sess, 1)])
    """)
    findings = lint_source(source, "job.py")
    assert findings and all(d.fix is None and d.manual_edit is not None for d in findings)
    assert all("manual edit required" not in d.message and "manual edit required" in d.full_message
               for d in findings)


LOOPS = """
    import multiprocessing as mp

    def work(x):
        return x

    if __name__ == "__main__":
        for batch in range(3):
            while True:
                results = [pool.apply(work, (x,)) for x in batch]
                break
        handler = lambda: pool.apply(work, (1,))
        pool.map(work, [1])
"""


def test_loops_around_lists_the_loops_innermost_first() -> None:
    analysis = analyse(LOOPS)
    in_loops = call_named(analysis, "pool.apply(work, (x,))")
    assert [type(loop) for loop in analysis.loops_around(in_loops)] == [cst.ListComp, cst.While, cst.For]
    assert analysis.loops_around(call_named(analysis, "pool.map(work, [1])")) == []


def test_kind_of_resolves_a_node_where_it_is_evaluated() -> None:
    analysis = analyse("""
        import multiprocessing as mp
        import tensorflow as tf

        sess = tf.compat.v1.Session()
        pool = mp.Pool(2)
        pool.map(print, [sess])
        pool.map(lambda x: sess, [1])
        sess = None
    """)
    pool_map = call_named(analysis, "pool.map(print, [sess])")
    assert analysis.kind_of(pool_map.func.value).kind is Kind.POOL  # `pool` at the call
    assert analysis.kind_of(pool_map.args[1].value.elements[0].value).kind is Kind.SESSION  # before `sess = None`
    assert analysis.kind_of(call_named(analysis, "tf.compat.v1.Session()")).kind is Kind.SESSION
    assert analysis.name_of(call_named(analysis, "tf.compat.v1.Session()").func) == "tensorflow.Session"
    # `sess` in the lambda resolves in the lambda's scope, whenever it runs: not at the call around it
    in_lambda = call_named(analysis, "pool.map(lambda x: sess, [1])").args[0].value.body
    assert analysis.site_around(in_lambda) is None and analysis.kind_of(in_lambda).kind is Kind.UNKNOWN
