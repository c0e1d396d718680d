"""TFP204: a notebook starts spawn or forkserver workers that run a function defined in the notebook."""

from __future__ import annotations

from tfproc_lint.analysis import outcomes
from tfproc_lint.analysis.workers import WorkerKind
from tfproc_lint.rules.base import Example, Finding, Report, Rule, finding, shown, worded

# Workers pickled by reference to their definition; lambdas and closures fail earlier, in the parent.
BY_REFERENCE = (WorkerKind.FUNCTION, WorkerKind.METHOD)
WHAT = {"POOL": "pool", "EXECUTOR": "executor", "PROCESS": "process"}


@finding
class WorkerInNotebook(Finding):
    method: str
    what: str  # pool, executor or process
    runs: str = shown()  # the function the workers run
    defined: str = shown()  # what the children must import: that function, or its class
    of_class: bool  # `runs` is a method of the class `defined`
    assumption: str = worded()

    def message(self) -> str:
        return (f"{self.method}-started {self.what} runs `{self.runs}`"
                f"{f' of `{self.defined}`' if self.of_class else ''}, defined in the notebook: the children cannot "
                f"import the notebook's `__main__`, so they fail with `AttributeError: Can't get "
                f"attribute '{self.defined}' on <module '__main__'>` and the {self.what} can wait forever; move "
                f"`{self.defined}` into a module and import it{self.assumption}")


class WorkerDefinedInNotebook(Rule):
    code = "TFP204"
    name = "worker-defined-in-notebook"
    summary = "spawn or forkserver workers started from a notebook run a function defined in the notebook"
    what_it_does = (
        "In a Jupyter notebook, reports a pool, executor or process started with the spawn or "
        "forkserver start method whose worker function (or initializer, or `Process` subclass) is "
        "defined in the notebook itself. The start method is read from the notebook "
        "(`get_context(\"spawn\")`, `set_start_method(...)`, `mp_context=`), then the configuration "
        "(`assume-start-method`; `target-python` 3.14 and later: forkserver, the Linux default). "
        "Only notebooks are checked: another interactive `__main__` (a REPL, `python -c`) cannot be "
        "seen in a file."
    )
    why_bad = (
        "spawn and forkserver children start a fresh interpreter and find the worker by its module "
        "and name. A function defined in a notebook lives in the kernel's interactive `__main__`, "
        "which a child cannot import, so each child fails with `AttributeError: Can't get attribute "
        "'<name>' on <module '__main__'>` while unpickling the task. A `Pool` replaces the dead "
        "worker and waits forever for the lost task; the cell never finishes. Under fork the child "
        "inherits the function, so the same notebook works on Linux before Python 3.14 and hangs "
        "on 3.14, on macOS and on Windows."
    )
    known_problems = (
        "A worker imported from a module is fine and not reported. Workers defined in a notebook "
        "and started under fork are not reported by this rule (TFP201 covers fork after TensorFlow "
        "started)."
    )
    fix_safety = (
        "No automatic fix (manual edit required): move the worker function into a module (a `.py` "
        "file next to the notebook, e.g. written with `%%writefile workers.py`) and import it."
    )
    evidence = (
        "In a real Jupyter kernel, a spawn `Pool` whose worker is defined in a cell loses its tasks "
        "(the workers die with the AttributeError) and the cell runs until killed; the same pool "
        "with the worker imported from a module next to the notebook returns the right result."
    )
    references = (
        "https://docs.python.org/3/library/multiprocessing.html#using-a-pool-of-workers",
        "https://github.com/ipython/ipython/issues/10894",
        "https://github.com/jupyter/notebook/issues/5261",
        "https://docs.python.org/3/whatsnew/3.14.html#multiprocessing",
    )
    options = ("assume-start-method", "target-python")
    bad_examples = (
        Example(
            """\
            # %% cell 1
            import multiprocessing as mp
            import tensorflow as tf

            # %% cell 2
            def embed(text):
                return tf.strings.length(text).numpy()

            # %% cell 3
            with mp.get_context('spawn').Pool(2) as pool:
                lengths = pool.map(embed, ['a', 'bb'])
            """,
            ("TFP204",),
            notebook=True,
        ),
        Example(
            """\
            import multiprocessing as mp
            import tensorflow as tf

            def embed(text):
                return tf.strings.length(text).numpy()

            with mp.Pool(2) as pool:
                lengths = pool.map(embed, ['a', 'bb'])
            """,
            ("TFP204",),
            config=(("target-python", "3.14"),),
            notebook=True,
        ),
    )
    good_examples = (
        Example(
            """\
            # %% cell 1
            import multiprocessing as mp
            import tensorflow as tf
            from text_workers import embed  # text_workers.py, next to the notebook

            # %% cell 2
            with mp.get_context('spawn').Pool(2) as pool:
                lengths = pool.map(embed, ['a', 'bb'])
            """,
            notebook=True,
        ),
        Example(
            """\
            import multiprocessing as mp
            import tensorflow as tf

            def embed(text):
                return tf.strings.length(text).numpy()

            with mp.get_context('fork').Pool(2) as pool:
                lengths = pool.map(embed, ['a', 'bb'])
            """,
            notebook=True,
        ),
        Example(  # the same code in a .py file: its `__main__` is importable
            """\
            import multiprocessing as mp
            import tensorflow as tf

            def embed(text):
                return tf.strings.length(text).numpy()

            if __name__ == '__main__':
                with mp.get_context('spawn').Pool(2) as pool:
                    lengths = pool.map(embed, ['a', 'bb'])
            """,
        ),
    )

    def check_file(self, analysis):
        if not analysis.notebook:
            return
        for owner in analysis.owners.values():
            method, why = analysis.start_method(owner.value)
            if method not in ("spawn", "forkserver"):
                continue
            what = WHAT[owner.value.kind.name]
            for worker in owner.workers:
                if worker.function is None or worker.kind not in BY_REFERENCE:
                    continue
                # A method (a Keras dataset's __getitem__) travels by its class: the class is missing.
                defined = worker.function.class_info.node if worker.function.class_info is not None \
                    else worker.function.node
                name = defined.name.value
                runs = worker.function.node.name.value
                yield Report(
                    worker.node,
                    WorkerInNotebook(method, what, runs, name, runs != name, outcomes.assumption(None, method, why)),
                    related=((defined.name, f"`{name}` is defined here, in the notebook"),),
                )
