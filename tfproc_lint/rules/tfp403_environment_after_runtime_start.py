"""TFP403: an environment variable TensorFlow reads when its runtime starts, set after it started."""

from __future__ import annotations

from tfproc_lint.analysis.outcomes import with_article
from tfproc_lint.analysis.file_analysis import FileAnalysis
from tfproc_lint.analysis.project_names import SettingKind
from tfproc_lint.analysis.settings import (environment_settings, forked_after_start, late_helper_settings,
                                           setting_related, worker_nodes)
from tfproc_lint.fixes.move_setting import MoveBeforeRuntimeStart
from tfproc_lint.knowledge import environment
from tfproc_lint.rules.base import Example, Finding, Report, Rule, finding, shown, worded


@finding
class SetAfterStart(Finding):
    setting: str = shown()  # as spelled
    variable: str  # the first variable it sets that TensorFlow reads at its start
    line: int = shown()  # where the runtime started
    reason: str = worded()  # what started it

    def message(self) -> str:
        return (f"`{self.setting}` is set after TensorFlow's runtime started (line {self.line}: {self.reason}): "
                f"{environment.RUNTIME_ENVIRONMENT[self.variable]}; set it before line {self.line} (before `import "
                "tensorflow` is safest)")


@finding
class SetByHelperAfterStart(Finding):
    helper: str = shown()  # the other module's function, as called
    setting: str = shown()  # as spelled there
    place: str = shown()  # where it sets it: `pkg/gpus.py:4`
    variable: str
    line: int = shown()
    reason: str = worded()

    def message(self) -> str:
        return (f"`{self.helper}()` runs after TensorFlow's runtime started (line {self.line}: {self.reason}) and "
                f"leads to `{self.setting}` being set ({self.place}): "
                f"{environment.RUNTIME_ENVIRONMENT[self.variable]}; call it "
                f"before line {self.line} (before `import tensorflow` is safest)")


@finding
class SetInForkedWorker(Finding):
    setting: str = shown()
    variable: str
    noun: str = worded()  # the workers' maker
    line: int = shown()
    reason: str = worded()

    def message(self) -> str:
        return (f"`{self.setting}` is set in {with_article(self.noun)} worker forked after the parent started "
                f"TensorFlow's runtime (line {self.line}: {self.reason}), which the child inherits: "
                f"{environment.RUNTIME_ENVIRONMENT[self.variable]}; set it in the parent before line {self.line}, or "
                "start the workers from multiprocessing.get_context(\"spawn\")")


class EnvironmentAfterRuntimeStart(Rule):
    code = "TFP403"
    name = "environment-after-runtime-start"
    summary = "CUDA_VISIBLE_DEVICES or a TF_* runtime variable set after TensorFlow's runtime started"
    fix_availability = "sometimes"
    what_it_does = (
        "Reports `os.environ[...] = ...`, `os.environ.update(...)`, `os.environ.setdefault(...)` and "
        "`os.putenv(...)` of `CUDA_VISIBLE_DEVICES`, `TF_FORCE_GPU_ALLOW_GROWTH`, `TF_GPU_ALLOCATOR`, "
        "`TF_NUM_INTEROP_THREADS` or `TF_NUM_INTRAOP_THREADS` (keys written as literals, as a name "
        "bound to one, or in a dict given to `update`) when they run after TensorFlow's runtime may "
        "have started in the same process (TFP201's execution-order walk, which also follows a "
        "class's constructor into the methods it calls when the class is constructed in another module), "
        "or in a worker forked from a parent that had started it. Setting them after `import tensorflow` "
        "but before the first op is fine and not reported. With project analysis, the call of another "
        "module's function that sets one (itself or through the project functions it calls, a few calls "
        "deep) is reported the same way, at the call, naming the line that sets it."
    )
    why_bad = (
        "TensorFlow reads these variables once: CUDA when it initialises, the GPU allocator and the "
        "thread pools when the runtime creates them. Set later, the value is silently ignored: "
        "every worker meant to get \"its own GPU\" lands on the same GPUs (and maps their memory), "
        "memory growth stays off, a thread limit does nothing. A forked worker inherits its "
        "parent's started runtime, so setting them in its initializer is too late as well."
    )
    known_problems = (
        "Listing physical devices (`tf.config.list_physical_devices(\"GPU\")`) initialises CUDA "
        "without starting the runtime: a `CUDA_VISIBLE_DEVICES` set after it is ignored too, but "
        "is not reported. Variables set in another module are seen only through a call of a function "
        "of that module (not a method of an object made there); keys computed at run time are not seen."
    )
    fix_safety = (
        "Safe: when the assignment is a statement of its own (or the call of a function of this "
        "file that only makes such settings, called once) in the same block as "
        "the statement where the runtime starts, the fix moves it just above that statement, "
        "provided the statements it moves past do not bind what it reads and do not read the "
        "environment. Otherwise (the runtime started at import, in another function, or in the "
        "parent of a forked worker): manual edit required. A call of another module's function that "
        "sets it: manual edit required (move the call, or the setting, before the start)."
    )
    evidence = (
        "`TF_NUM_INTRAOP_THREADS=1` and `TF_NUM_INTEROP_THREADS=1` set with `os.environ.update` after "
        "one eager op leave the process with as many threads as a fresh interpreter without them "
        "(wrong result: the limit did nothing); set before `import tensorflow`, or after it but before "
        "the first op (also the auto-fixed scenario), the thread count matches a fresh interpreter "
        "started with them. `CUDA_VISIBLE_DEVICES` after a GPU op is a GPU scenario (skipped where no "
        "GPU exists)."
    )
    references = (
        "https://www.tensorflow.org/guide/gpu",
        "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#env-vars",
        "https://github.com/NVIDIA/DALI/issues/2014",
        "https://github.com/pytorch/pytorch/issues/23544",
    )
    options = ("assume-start-method", "target-python")
    bad_examples = (
        Example(
            """\
            import os
            import tensorflow as tf

            def main():
                probe = tf.reduce_sum(tf.ones((256, 256)))
                os.environ['TF_NUM_INTRAOP_THREADS'] = '1'
                print(float(probe))

            if __name__ == '__main__':
                main()
            """,
            ("TFP403",),
            fixed="""\
            import os
            import tensorflow as tf

            def main():
                os.environ['TF_NUM_INTRAOP_THREADS'] = '1'
                probe = tf.reduce_sum(tf.ones((256, 256)))
                print(float(probe))

            if __name__ == '__main__':
                main()
            """,
        ),
        Example(
            """\
            import multiprocessing as mp
            import os
            import tensorflow as tf

            def pin(gpu_ids):
                os.environ['CUDA_VISIBLE_DEVICES'] = str(gpu_ids.get())

            def score(seed):
                return float(tf.reduce_sum(tf.random.normal((512, 512), seed=seed)))

            if __name__ == '__main__':
                model = tf.keras.models.load_model('ranker.keras')
                ids = mp.Queue()
                with mp.Pool(2, initializer=pin, initargs=(ids,)) as pool:
                    print(pool.map(score, range(4)))
            """,
            ("TFP201", "TFP403"),
            fixed="""\
            import multiprocessing as mp
            import os
            import tensorflow as tf

            def pin(gpu_ids):
                os.environ['CUDA_VISIBLE_DEVICES'] = str(gpu_ids.get())

            def score(seed):
                return float(tf.reduce_sum(tf.random.normal((512, 512), seed=seed)))

            if __name__ == '__main__':
                model = tf.keras.models.load_model('ranker.keras')
                ids = mp.Queue()
                with mp.get_context("spawn").Pool(2, initializer=pin, initargs=(ids,)) as pool:
                    print(pool.map(score, range(4)))
            """,
        ),
        Example(
            """\
            import os
            import tensorflow as tf

            class Trainer:  # constructed in another module
                def __init__(self, gpu):
                    self.devices = tf.config.list_logical_devices()
                    self.pin(gpu)

                def pin(self, gpu):
                    os.environ['CUDA_VISIBLE_DEVICES'] = str(gpu)
            """,
            ("TFP403",),
        ),
    )
    good_examples = (
        Example(
            """\
            import os
            import tensorflow as tf

            def main():
                os.environ['TF_NUM_INTRAOP_THREADS'] = '1'
                probe = tf.reduce_sum(tf.ones((256, 256)))
                print(float(probe))

            if __name__ == '__main__':
                main()
            """
        ),
        Example(
            """\
            import os

            os.environ['CUDA_VISIBLE_DEVICES'] = '1'
            import tensorflow as tf  # noqa: E402

            print(tf.reduce_sum(tf.ones((256, 256))))
            """
        ),
    )

    def check_file(self, analysis: FileAnalysis):
        settings = environment_settings(analysis)
        # Set before the runtime started too (here or by a helper): setting it again changes nothing.
        made_here_before = {key for s in settings if analysis.execution.also_reached_before_start(s.node)
                            for key in s.keys}
        for made, started in late_helper_settings(analysis, SettingKind.ENVIRONMENT, made_here_before):
            setting = made.setting
            yield Report(
                made.call,
                SetByHelperAfterStart(made.helper, setting.spelled, str(setting.place), setting.name,
                                      analysis.line_of(started.call), started.reason),
                related=(setting_related(setting), (started.call, f"TensorFlow runtime started here: {started.reason}"),
                         *analysis.tf.external_related(started.call)),
            )
        if not settings:
            return
        walk = analysis.execution
        reported = set()
        for setting in settings:
            started = walk.started_before(setting.node)
            if started is None or walk.also_reached_before_start(setting.node) \
                    or walk.only_after_an_exception(setting.node):
                continue
            reported.add(setting.node)
            yield Report(
                setting.node,
                SetAfterStart(setting.spelled, setting.keys[0], analysis.line_of(started.call), started.reason),
                fix=MoveBeforeRuntimeStart(setting.node, started),
                related=((started.call, f"TensorFlow runtime started here: {started.reason}"),
                         *analysis.tf.external_related(started.call)),
            )
        by_node = {setting.node: setting for setting in settings}
        for owner, started in forked_after_start(analysis):
            line = analysis.line_of(started.call)
            in_worker = worker_nodes(analysis, owner)
            set_in_parent = {key for s in settings if s.node not in in_worker
                             and walk.also_reached_before_start(s.node) for key in s.keys}
            for node in in_worker:
                setting = by_node.get(node)
                if setting is None or node in reported or set(setting.keys) <= set_in_parent:
                    continue
                reported.add(node)
                yield Report(
                    node,
                    SetInForkedWorker(setting.spelled, setting.keys[0], owner.noun, line, started.reason),
                    related=((started.call, f"TensorFlow runtime started here: {started.reason}"),
                             *analysis.tf.external_related(started.call)),
                    cause=owner.construction,
                )
