"""TFP202: processes started (or the start method set) at import, where spawn or forkserver
children re-import the module."""

from __future__ import annotations

from functools import partial

from tfproc_lint.analysis import engines, outcomes
from tfproc_lint.analysis.file_analysis import FileAnalysis
from tfproc_lint.analysis.kinds import Kind
from tfproc_lint.analysis.start_methods import is_library_module, set_start_method_calls
from tfproc_lint.fixes.main_guard import GuardTheRest
from tfproc_lint.rules.base import Example, Finding, Report, Rule, finding, shown, worded

REIMPORTING = ("spawn", "forkserver")
_OWNERS = (Kind.POOL, Kind.PROCESS, Kind.EXECUTOR)
_GUARD = 'if __name__ == "__main__":'


# `imported`, last in each: where another module of the project imports this one, or None.
@finding
class StartedAtImport(Finding):
    noun: str = worded()
    method: str
    runtime_line: int | None = shown()  # where the TensorFlow work the children re-run starts
    runtime_reason: str | None = worded()
    assumption: str = worded()
    imported: str | None = worded()

    def message(self) -> str:
        rerun = (f", its TensorFlow work included (line {self.runtime_line}: {self.runtime_reason}),"
                 if self.runtime_line is not None else "")
        if self.imported is not None:
            return (f"{self.noun} started at import under {self.method}: each child imports this module again (it "
                    f"is imported by {self.imported}), re-runs its top level{rerun} and dies here (RuntimeError: a "
                    f"new process started while bootstrapping), so no task runs and a pool can wait forever; start "
                    f"the workers in a function that the entry point calls (or make the pool on first use), not at "
                    f"import{self.assumption}")
        return (f"{self.noun} started at import under {self.method}: each child re-imports this module, re-runs its "
                f"top level{rerun} and dies here (RuntimeError: a new process started while bootstrapping), so "
                f"no task runs and a pool can wait forever; move the code from here on under `{_GUARD}`"
                f"{self.assumption}")


@finding
class ClusterStartedAtImport(Finding):
    cluster: str = shown()  # the call that makes the cluster
    imported: str | None = worded()

    def message(self) -> str:
        where = f"at import (this module is imported by {self.imported})" if self.imported is not None else "at import"
        remedy = ("make the client lazily, in a function that creates it on first use" if self.imported is not None
                  else f"move the code from here on under `{_GUARD}`")
        return (f"`{self.cluster}(...)` starts a local Dask cluster {where}: its nanny spawns each "
                f"worker process, which re-imports this module, starts the cluster again and dies (RuntimeError: a "
                f"new process started while bootstrapping; \"Nanny failed to start\"), so the cluster never "
                f"starts; {remedy} (or pass `processes=False` for threads)")


@finding
class MethodSetAtImport(Finding):
    call: str = worded()  # the set_start_method call as spelled
    method: str
    imported: str | None = worded()

    def message(self) -> str:
        where = f"at import of this module (imported by {self.imported})" if self.imported is not None else "at import"
        remedy = (f"call it once in the entry point's `{_GUARD}` block instead" if self.imported is not None
                  else f"move it (and the code that starts processes) under `{_GUARD}`")
        return (f"{self.call} runs {where}: each {self.method} child starts with the method already set, "
                f"re-imports this module and dies here with `RuntimeError: context has already been set`, so no "
                f"worker runs and a pool can wait forever; {remedy}")


class WorkersStartedAtImport(Rule):
    code = "TFP202"
    name = "workers-started-at-import"
    summary = "spawn or forkserver workers started (or the start method set) when the module is imported"
    fix_availability = "sometimes"
    what_it_does = (
        "Reports the first place where a module starts a pool, a process or a process pool "
        "executor, or calls `multiprocessing.set_start_method(...)` without `force=True`, while it "
        "is being imported: at module level outside `if __name__ == \"__main__\":`, or in a "
        "function that the module's top level calls, when those processes start with spawn or "
        "forkserver. The start method is read from the code (`get_context(\"spawn\")`, "
        "`set_start_method`, `mp_context=`), then `assume-start-method`, then `target-python` "
        "(forkserver is the Linux default from Python 3.14). Fork, joblib's loky backend, Keras "
        "data workers and notebooks (whose cells children never re-import) are not reported. Also a "
        "local Dask cluster started at import: `LocalCluster(...)`, or a `Client(...)` given no scheduler "
        "address, with process workers (the default); `processes=False` (threads), a `Client()` in a module "
        "that names Dask's `scheduler-address` setting (it connects to that scheduler) and `ray.init()` "
        "(Ray's workers never import `__main__`) are not reported."
    )
    why_bad = (
        "A spawn or forkserver child starts a fresh interpreter and re-imports the main module (as "
        "`__mp_main__`) to find the worker function. Everything the module does at import runs "
        "again in every child: its TensorFlow work (a model loaded per worker) and then the start "
        "itself, which multiprocessing refuses in a child that is still bootstrapping (\"An attempt "
        "has been made to start a new process before the current process has finished its "
        "bootstrapping phase\"). A module-level `set_start_method(\"spawn\")` fails first: the child "
        "already has the method set, so it raises `RuntimeError: context has already been set`. "
        "The child dies, a `Pool` starts another one, and the program waits forever. The same "
        "script works under Linux's fork default before Python 3.14 and hangs on 3.14, macOS and "
        "Windows."
    )
    known_problems = (
        "Only the first start is reported: guarding it usually guards the rest. A start method or "
        "processes set up in another module (the package's `__init__`, an entry point) are not "
        "seen; set `assume-start-method` when the program picks spawn or forkserver elsewhere. "
        "`set_start_method` at the top of a library module (a package's `__init__.py`, a module "
        "with relative imports and no `__main__` block) is TFP203's."
    )
    fix_safety = (
        "The fix moves the module's statements from the first start to its end under "
        "`if __name__ == \"__main__\":`. It is unsafe: that code no longer runs when the module is "
        "imported by another module. It is offered only when nothing from there on is a "
        "definition, a name that a function of the module reads, or an existing `__main__` block, "
        "and never in a module that another module of the project imports, where the guarded code "
        "would never run (the message says to start the workers in a function the entry point "
        "calls, or to make the pool or client on first use); otherwise manual edit required."
    )
    evidence = (
        "`set_start_method(\"spawn\")` and a `Pool` at module level with no main guard: every worker "
        "dies re-importing the script (`RuntimeError: context has already been set`), the pool "
        "keeps replacing them and `map` never returns (lost task). A module-level "
        "`get_context(\"spawn\").Pool(...)`: the workers die starting a pool while bootstrapping, "
        "same outcome. The guarded twin and the auto-fixed scenario return the right sums. A module-level "
        "`LocalCluster(n_workers=2)` (Dask 2026.8): every worker dies with the bootstrapping RuntimeError, "
        "`Nanny failed to start` ends the script; guarded, or with `processes=False`, the tasks run."
    )
    references = (
        "https://docs.python.org/3/library/multiprocessing.html#multiprocessing-safe-main-import",
        "https://docs.python.org/3/whatsnew/3.14.html#multiprocessing",
        "https://github.com/DeepLabCut/DeepLabCut/issues/1362",
        "https://github.com/brucechou1983/CheXNet-Keras/issues/56",
    )
    options = ("assume-start-method", "target-python")
    bad_examples = (
        Example(
            """\
            import multiprocessing as mp
            import tensorflow as tf

            def norm(seed):
                return float(tf.norm(tf.random.normal((256, 256), seed=seed)))

            mp.set_start_method('spawn')
            with mp.Pool(2) as pool:
                print(pool.map(norm, range(4)))
            """,
            ("TFP202",),
            fixed="""\
            import multiprocessing as mp
            import tensorflow as tf

            def norm(seed):
                return float(tf.norm(tf.random.normal((256, 256), seed=seed)))

            if __name__ == "__main__":
                mp.set_start_method('spawn')
                with mp.Pool(2) as pool:
                    print(pool.map(norm, range(4)))
            """,
        ),
        Example(
            """\
            import multiprocessing as mp
            import tensorflow as tf

            def norm(seed):
                return float(tf.norm(tf.random.normal((256, 256), seed=seed)))

            with mp.Pool(2) as pool:
                print(pool.map(norm, range(4)))
            """,
            ("TFP202",),
            config=(("target-python", "3.14"),),
            fixed="""\
            import multiprocessing as mp
            import tensorflow as tf

            def norm(seed):
                return float(tf.norm(tf.random.normal((256, 256), seed=seed)))

            if __name__ == "__main__":
                with mp.Pool(2) as pool:
                    print(pool.map(norm, range(4)))
            """,
        ),
        Example(
            """\
            import tensorflow as tf
            from dask.distributed import Client, LocalCluster

            def norm(seed):
                return float(tf.norm(tf.random.normal((256, 256), seed=seed)))

            cluster = LocalCluster(n_workers=2)
            client = Client(cluster)
            print(client.gather(client.map(norm, range(4))))
            """,
            ("TFP202",),
            fixed="""\
            import tensorflow as tf
            from dask.distributed import Client, LocalCluster

            def norm(seed):
                return float(tf.norm(tf.random.normal((256, 256), seed=seed)))

            if __name__ == "__main__":
                cluster = LocalCluster(n_workers=2)
                client = Client(cluster)
                print(client.gather(client.map(norm, range(4))))
            """,
        ),
    )
    good_examples = (
        Example(  # Ray's workers never re-import the driver's script
            """\
            import ray
            import tensorflow as tf

            @ray.remote
            def norm(seed):
                return float(tf.norm(tf.random.normal((256, 256), seed=seed)))

            ray.init(num_cpus=2)
            print(ray.get([norm.remote(seed) for seed in range(4)]))
            """
        ),
        Example(
            """\
            import multiprocessing as mp
            import tensorflow as tf

            def norm(seed):
                return float(tf.norm(tf.random.normal((256, 256), seed=seed)))

            if __name__ == '__main__':
                mp.set_start_method('spawn')
                with mp.Pool(2) as pool:
                    print(pool.map(norm, range(4)))
            """
        ),
        Example(  # fork (the Linux default before 3.14) does not re-import the module
            """\
            import multiprocessing as mp
            import tensorflow as tf

            def norm(seed):
                return float(tf.norm(tf.random.normal((256, 256), seed=seed)))

            with mp.Pool(2) as pool:
                print(pool.map(norm, range(4)))
            """
        ),
    )

    def check_file(self, analysis: FileAnalysis):
        if analysis.notebook:
            return
        candidates = []
        for owner in analysis.owners.values():
            if owner.value.kind not in _OWNERS or owner.value.detail == "os.fork" or owner.value.method == "loky":
                continue
            method, why = analysis.start_method(owner.value)
            if method in REIMPORTING:
                candidates.append((owner, method, why))
        library = is_library_module(analysis)
        calls = [c for c in set_start_method_calls(analysis) if c.method in REIMPORTING and not c.forced]
        clusters = [] if library else engines.dask_process_clusters(analysis)
        if not candidates and not calls and not clusters:
            return
        walk = analysis.execution
        # (node, message for: None, or where another module of the project imports this one)
        found = [(call, partial(ClusterStartedAtImport, analysis.code(call.func, 30))) for call in clusters
                 if walk.runs_on_import(call)]
        for owner, method, why in candidates:
            starts = [call for call in owner.fork_calls if walk.runs_on_import(call)]
            if starts:
                node = owner.construction if walk.runs_on_import(owner.construction) else starts[0]
                started = analysis.execution.started_before(node)
                line, reason = (analysis.line_of(started.call), started.reason) if started is not None else (None, None)
                found.append((node, partial(StartedAtImport, owner.noun, method, line, reason,
                                            outcomes.assumption(None, method, why))))
        if not library:
            for call in calls:
                if walk.runs_on_import(call.call):
                    found.append((call.call, partial(MethodSetAtImport, call.spelled, call.method)))
        if not found:
            return
        node, finding = min(found, key=lambda item: analysis.symbols.order_of_node.get(item[0], 0))
        # A module that others import is no entry point: its `__main__` block would never run.
        importers = analysis.project.importers() if analysis.project is not None else ()
        imported = importers[0] if importers else None
        yield Report(node, finding(str(imported) if imported is not None else None),
                     fix=GuardTheRest(node, imported))
