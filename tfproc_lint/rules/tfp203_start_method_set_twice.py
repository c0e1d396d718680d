"""TFP203: `set_start_method()` where the start method may already be set."""

from __future__ import annotations

import libcst as cst

from tfproc_lint.analysis.file_analysis import FileAnalysis
from tfproc_lint.analysis.project_names import SettingKind
from tfproc_lint.analysis.settings import helper_settings, setting_related
from tfproc_lint.analysis.start_methods import catches_runtime_error, is_library_module, set_start_method_calls
from tfproc_lint.fixes.context_object import UseContextObject
from tfproc_lint.rules.base import Example, Finding, Report, Rule, finding, shown, worded

_ERROR = "`RuntimeError: context has already been set`"


@finding
class SetAfterFixed(Finding):
    call: str = worded()  # the set_start_method call as spelled
    line: int | None = shown()  # where the method was fixed; None: by this very call, which ran once already
    reason: str = worded()  # what fixed it there
    in_imported_module: bool  # a module this one imports fixed it when imported

    def message(self) -> str:
        why = "it already ran once" if self.line is None else f"line {self.line}: {self.reason}"
        advice = ("ask for multiprocessing.get_context(...) where the processes are made, or set the method "
                  "once in the entry point") if not self.in_imported_module else \
            "remove the call from that module (a spawned child imports it again, and raises there too)"
        return f"{self.call} can run after the start method was fixed ({why}): it raises {_ERROR}; {advice}"


@finding
class HelperSetAfterFixed(Finding):
    helper: str = shown()  # the other module's function, as called
    call: str = worded()  # its set_start_method call as spelled there
    place: str = shown()  # where: `pkg/setup.py:5`
    line: int | None = shown()  # where the method was fixed; None: by this very call, which ran once already
    reason: str = worded()

    def message(self) -> str:
        why = "it already ran once" if self.line is None else f"line {self.line}: {self.reason}"
        return (f"`{self.helper}()` calls {self.call} ({self.place}) and can run after the start method was fixed "
                f"({why}): it raises {_ERROR}; set the method once in the entry point, or ask for "
                "multiprocessing.get_context(...) where the processes are made")


@finding
class SetInLibrary(Finding):
    call: str = worded()

    def message(self) -> str:
        return (f"{self.call} runs when this library module is imported: a program that already chose a "
                f"start method, and every spawned child (which starts with it set), gets {_ERROR}; leave it to "
                "the program's entry point, or ask for multiprocessing.get_context(...) where the processes "
                "are made")


class StartMethodSetTwice(Rule):
    code = "TFP203"
    name = "start-method-set-twice"
    summary = "multiprocessing.set_start_method() where the start method may already be set"
    fix_availability = "sometimes"
    what_it_does = (
        "Reports `multiprocessing.set_start_method(...)` without `force=True` where it can run when "
        "the start method is already fixed: a second time (a function called from several places "
        "or in a loop), after a pool, queue, lock, manager, started process or executor was made "
        "with the default context (which fixes the method), after `get_start_method()` without "
        "`allow_none=True` or `get_context()` without a method, and in a library module at import "
        "(a package's `__init__.py` or a module with relative imports, without a `__main__` block). "
        "The order follows TFP201's execution-order walk through the file's calls and control "
        "flow. A call inside `try: ... except RuntimeError:` is not reported. With project analysis, "
        "a call of another module's function that sets the method (itself or through the project "
        "functions it calls, without `force=True`, not inside `except RuntimeError`) counts as "
        "setting it: reported at the call where the method may be fixed already, and fixing it for "
        "what comes after."
    )
    why_bad = (
        "The global start method can be set once. The second `set_start_method` (or the first one "
        "after the default context was used) raises " + _ERROR + ": typically on the second "
        "call of a `train()` / `evaluate()` helper that \"makes sure\" of spawn, or after a `Queue` "
        "made earlier. A library that sets it at import breaks every program that chose a method "
        "first, and every spawned child, which starts with the method set and imports the library "
        "again."
    )
    known_problems = (
        "A module of the project that this file imports and that sets or fixes the method at import "
        "counts at the import (project analysis); an entry point that sets the method and then "
        "imports this module is not seen from here. A function that is only an entry point of its "
        "own is assumed to run once."
    )
    fix_safety = (
        "Safe where the setting is local: when the call is a statement of a function that makes "
        "every process object of the file that uses the default context (pools, processes, queues, "
        "locks, managers, executors) after it, the fix replaces it with `ctx = "
        "multiprocessing.get_context(\"spawn\")` and makes those objects from `ctx` "
        "(`ProcessPoolExecutor` gains `mp_context=ctx`). Code in other modules that relied on the "
        "global method is not seen. Manual edit required where a module this file imports sets the "
        "method at import: every spawned child imports it again and raises, so the call must go from "
        "that module (the message names its line). Otherwise manual edit required: pass `force=True`, "
        "or set the method once in the entry point."
    )
    evidence = (
        "A helper that calls `set_start_method(\"spawn\")` and runs a spawn pool, called twice: the "
        "second call raises `RuntimeError: context has already been set` in the parent. The same "
        "helper asking for `multiprocessing.get_context(\"spawn\")` (the fixed twin and the auto-fixed "
        "scenario) returns all four sums. A package whose `__init__.py` sets fork at import, then an "
        "entry point that sets spawn: the same error in the parent; with `get_context(\"spawn\")` in the "
        "entry instead, every spawned worker raises it when it imports the package (workers lost, the "
        "pool never returns); the package leaving the method alone: ok."
    )
    references = (
        "https://docs.python.org/3/library/multiprocessing.html#multiprocessing.set_start_method",
        "https://docs.python.org/3/library/multiprocessing.html#contexts-and-start-methods",
        "https://github.com/djgroen/FabSim3/issues/201",
        "https://github.com/facebookresearch/SlowFast/issues/204",
    )
    bad_examples = (
        Example(
            """\
            import multiprocessing as mp
            import tensorflow as tf

            def norm(seed):
                return float(tf.norm(tf.random.normal((256, 256), seed=seed)))

            def run(seeds):
                mp.set_start_method('spawn')
                with mp.Pool(2) as pool:
                    return pool.map(norm, seeds)

            if __name__ == '__main__':
                print(run([1, 2]), run([3, 4]))
            """,
            ("TFP203",),
            fixed="""\
            import multiprocessing as mp
            import tensorflow as tf

            def norm(seed):
                return float(tf.norm(tf.random.normal((256, 256), seed=seed)))

            def run(seeds):
                ctx = mp.get_context("spawn")
                with ctx.Pool(2) as pool:
                    return pool.map(norm, seeds)

            if __name__ == '__main__':
                print(run([1, 2]), run([3, 4]))
            """,
        ),
        Example(
            """\
            import multiprocessing as mp
            import tensorflow as tf

            def norm(seed):
                return float(tf.norm(tf.random.normal((256, 256), seed=seed)))

            if __name__ == '__main__':
                results = mp.Queue()
                mp.set_start_method('spawn')
                with mp.Pool(2) as pool:
                    print(pool.map(norm, range(4)))
            """,
            ("TFP203",),
        ),
    )
    good_examples = (
        Example(
            """\
            import multiprocessing as mp
            import tensorflow as tf

            def norm(seed):
                return float(tf.norm(tf.random.normal((256, 256), seed=seed)))

            def run(seeds):
                ctx = mp.get_context('spawn')
                with ctx.Pool(2) as pool:
                    return pool.map(norm, seeds)

            if __name__ == '__main__':
                print(run([1, 2]), run([3, 4]))
            """
        ),
        Example(
            """\
            import multiprocessing as mp
            import tensorflow as tf

            def norm(seed):
                return float(tf.norm(tf.random.normal((256, 256), seed=seed)))

            def run(seeds):
                try:
                    mp.set_start_method('spawn')
                except RuntimeError:
                    pass
                with mp.Pool(2) as pool:
                    return pool.map(norm, seeds)

            if __name__ == '__main__':
                print(run([1, 2]), run([3, 4]))
            """
        ),
    )

    def check_file(self, analysis: FileAnalysis):
        calls = [c for c in set_start_method_calls(analysis) if not c.forced]
        helpers = helper_settings(analysis, SettingKind.START_METHOD)
        if not calls and not helpers:
            return
        walk = analysis.context_walk
        for made in helpers:
            earlier = walk.started_before(made.call)
            if earlier is None:
                continue
            again = earlier.call is made.call
            yield Report(
                made.call,
                HelperSetAfterFixed(made.helper, made.setting.spelled, str(made.setting.place),
                                    None if again else analysis.line_of(earlier.call), "" if again else earlier.reason),
                related=(setting_related(made.setting),) + (() if again else (
                    (earlier.call, f"start method fixed here: {earlier.reason}"),
                    *analysis.tf.external_related(earlier.call, "start method fixed here"))),
            )
        library = is_library_module(analysis)
        for call in calls:
            if catches_runtime_error(analysis, call.call):
                continue
            earlier = walk.started_before(call.call)
            if earlier is not None:
                again = earlier.call is call.call
                elsewhere = () if again else analysis.tf.external_related(earlier.call, "start method fixed here")
                # A module that sets the method when imported: spawned children import it again, with the
                # method already set, and raise; no rewrite of this file helps.
                on_import = elsewhere[0][0] if elsewhere and isinstance(earlier.call, (cst.Import, cst.ImportFrom)) \
                    else None
                yield Report(
                    call.call,
                    SetAfterFixed(call.spelled, None if again else analysis.line_of(earlier.call),
                                  "" if again else earlier.reason, on_import is not None),
                    fix=UseContextObject(call, set_on_import=on_import),
                    related=() if again else ((earlier.call, f"start method fixed here: {earlier.reason}"),
                                              *elsewhere),
                )
            elif library and analysis.execution.runs_on_import(call.call):
                yield Report(
                    call.call,
                    SetInLibrary(call.spelled),
                )
