"""TFP402: `tf.config` settings that must come before the runtime starts, made after it."""

from __future__ import annotations

from tfproc_lint.analysis.outcomes import with_article
from tfproc_lint.analysis.file_analysis import FileAnalysis
from tfproc_lint.analysis.project_names import SettingKind
from tfproc_lint.analysis.settings import (configuration_calls, forked_after_start, late_helper_settings,
                                           setting_related, worker_calls)
from tfproc_lint.analysis.start_methods import catches_runtime_error
from tfproc_lint.fixes.move_setting import MoveBeforeRuntimeStart
from tfproc_lint.knowledge.tensorflow import GPU_ONLY_CONFIGURATION, RUNTIME_CONFIGURATION
from tfproc_lint.rules.base import Example, Finding, Report, Rule, finding, shown, worded


@finding
class ConfiguredAfterStart(Finding):
    call: str = shown()  # the tf.config function called
    line: int = shown()  # where the runtime started
    reason: str = worded()  # what started it
    setting: str  # RUNTIME_CONFIGURATION's name for it
    swallowed: bool  # an `except` around it swallows the RuntimeError

    def message(self) -> str:
        effect = (f"it raises `RuntimeError: {RUNTIME_CONFIGURATION[self.setting]}`{_where(self.setting)}"
                  + (", which the `except` around it swallows, so the setting is lost" if self.swallowed else ""))
        return (f"`{self.call}()` runs after TensorFlow's runtime started (line {self.line}: {self.reason}): "
                f"{effect}; make it before line {self.line}, first thing in the program")


@finding
class ConfiguredByHelperAfterStart(Finding):
    helper: str = shown()  # the other module's function, as called
    call: str = shown()  # the tf.config function it calls
    place: str = shown()  # where it calls it: `pkg/perf.py:4`
    line: int = shown()  # where the runtime started
    reason: str = worded()
    setting: str

    def message(self) -> str:
        return (f"`{self.helper}()` runs after TensorFlow's runtime started (line {self.line}: {self.reason}) and "
                f"leads to `{self.call}()` ({self.place}), which raises `RuntimeError: "
                f"{RUNTIME_CONFIGURATION[self.setting]}`{_where(self.setting)}; call it before line {self.line}, "
                "first thing in the program")


@finding
class ConfiguredInForkedWorker(Finding):
    call: str = shown()
    noun: str = worded()  # the workers' maker
    line: int = shown()
    reason: str = worded()
    setting: str

    def message(self) -> str:
        return (f"`{self.call}()` runs in {with_article(self.noun)} worker forked after the parent started "
                f"TensorFlow's runtime (line {self.line}: {self.reason}): the child inherits the started runtime, so "
                f"it raises `RuntimeError: {RUNTIME_CONFIGURATION[self.setting]}`{_where(self.setting)} in every "
                "worker (a Pool replaces the dead workers forever, an executor breaks); configure in the parent "
                f"before line {self.line}, or start the workers from multiprocessing.get_context(\"spawn\")")


class ConfigurationAfterRuntimeStart(Rule):
    code = "TFP402"
    name = "configuration-after-runtime-start"
    summary = "tf.config thread, device or memory setting made after TensorFlow's runtime started"
    fix_availability = "sometimes"
    what_it_does = (
        "Reports `tf.config.threading.set_inter_op_parallelism_threads` / "
        "`set_intra_op_parallelism_threads`, `tf.config.set_logical_device_configuration` (and "
        "`experimental.set_virtual_device_configuration`), `tf.config.experimental.set_memory_growth` "
        "and `tf.config.set_visible_devices` when they run after TensorFlow's runtime may have "
        "started in the same process (the execution-order walk of TFP201: a session, an eager op, "
        "a `tf.data` dataset made in eager mode, a Keras model built, loaded or called, a device "
        "query that creates the devices, ...; a class's constructor is followed into the methods it "
        "calls, also when the class is constructed in another module), "
        "or in a worker forked from a parent that had started it (the pool's `initializer`, the "
        "task, a `Process` target). A call that also runs before the runtime starts (a helper "
        "called both before and after) is not reported: setting the same value again is accepted. "
        "With project analysis, the call of another module's function that makes such a setting "
        "(itself or through the project functions it calls, a few calls deep) is reported the same way, "
        "at the call, naming the setting's line there."
    )
    why_bad = (
        "These settings are read once, when the runtime creates its thread pools and devices. "
        "Afterwards TensorFlow refuses a new value with a `RuntimeError` (\"Intra op parallelism "
        "cannot be modified after initialization\", \"Virtual devices cannot be modified after "
        "being initialized\", \"Physical devices cannot be modified after being initialized\", "
        "\"Visible devices cannot be modified after being initialized\"). A forked worker inherits "
        "its parent's started runtime, so the typical \"one thread per worker\" initializer kills "
        "every worker: a `Pool` replaces them forever and never returns, a `ProcessPoolExecutor` "
        "raises `BrokenProcessPool`. Memory growth and visible devices only raise where a GPU is "
        "present: the code passes on a laptop and fails on the GPU server."
    )
    known_problems = (
        "Settings made in another module are seen only through a call of a function of that module "
        "(not through a method of an object made there), and never through a variable holding the "
        "function; such a call inside `try: ... except RuntimeError:` is not reported. A `try: ... "
        "except RuntimeError:` around the call (as in TensorFlow's GPU guide) is still reported: the "
        "error is swallowed but the setting is lost."
    )
    fix_safety = (
        "Safe: when the setting is a statement of its own (or the call of a function of this file "
        "that only makes settings, called once) in the same block as the "
        "statement where the runtime starts, the fix moves it just above that statement; the "
        "statements it moves past must not bind what it reads or read the environment or the "
        "configuration. Otherwise (the runtime starts in another function, at import, or in the "
        "parent of a forked worker): manual edit required. A call of another module's function that "
        "makes the setting: manual edit required (move the call, or the setting, before the start)."
    )
    evidence = (
        "After one eager op, `set_inter_op_parallelism_threads(1)`, `set_intra_op_parallelism_threads(1)` "
        "and `set_logical_device_configuration` (two logical CPUs) each raise the RuntimeError in the "
        "parent; the same three calls made before the first op take effect (1 inter-op and 1 "
        "intra-op thread reported, two logical CPUs), and so do the auto-fixed scenarios. In a fork "
        "`Pool`'s initializer after a parent op the RuntimeError kills every worker and `map` never "
        "returns; in a fork `ProcessPoolExecutor`'s initializer the executor raises "
        "`BrokenProcessPool`. Memory growth and visible devices after a GPU op are GPU scenarios "
        "(skipped where no GPU exists)."
    )
    references = (
        "https://www.tensorflow.org/api_docs/python/tf/config/threading/set_intra_op_parallelism_threads",
        "https://www.tensorflow.org/guide/gpu#limiting_gpu_memory_growth",
        "https://www.tensorflow.org/api_docs/python/tf/config/set_logical_device_configuration",
        "https://github.com/tensorflow/tensorflow/issues/57812",
        "https://github.com/hunglc007/tensorflow-yolov4-tflite/issues/171",
    )
    bad_examples = (
        Example(
            """\
            import tensorflow as tf

            def main():
                scale = tf.reduce_max(tf.random.uniform((512, 512)))
                tf.config.threading.set_intra_op_parallelism_threads(1)
                print(float(scale))

            if __name__ == '__main__':
                main()
            """,
            ("TFP402",),
            fixed="""\
            import tensorflow as tf

            def main():
                tf.config.threading.set_intra_op_parallelism_threads(1)
                scale = tf.reduce_max(tf.random.uniform((512, 512)))
                print(float(scale))

            if __name__ == '__main__':
                main()
            """,
        ),
        Example(
            """\
            import multiprocessing as mp
            import tensorflow as tf

            def one_thread():
                tf.config.threading.set_intra_op_parallelism_threads(1)

            def total(seed):
                return float(tf.reduce_sum(tf.random.normal((512, 512), seed=seed)))

            if __name__ == '__main__':
                print(float(tf.reduce_sum(tf.ones((512, 512)))))
                with mp.get_context('fork').Pool(2, initializer=one_thread) as pool:
                    print(pool.map(total, range(4)))
            """,
            ("TFP201", "TFP402"),
        ),
    )
    good_examples = (
        Example(
            """\
            import tensorflow as tf

            def main():
                tf.config.threading.set_intra_op_parallelism_threads(1)
                scale = tf.reduce_max(tf.random.uniform((512, 512)))
                print(float(scale))

            if __name__ == '__main__':
                main()
            """
        ),
        Example(
            """\
            import tensorflow as tf

            gpus = tf.config.list_physical_devices('GPU')
            for gpu in gpus:
                tf.config.experimental.set_memory_growth(gpu, True)
            print(tf.config.list_logical_devices('GPU'))
            """
        ),
    )

    def check_file(self, analysis: FileAnalysis):
        configs = dict(configuration_calls(analysis))
        # Made before the runtime started too (here or by a helper): setting the same value again is accepted.
        made_here_before = {name for call, name in configs.items()
                            if analysis.execution.also_reached_before_start(call)}
        for made, started in late_helper_settings(analysis, SettingKind.CONFIGURATION, made_here_before):
            setting = made.setting
            yield Report(
                made.call,
                ConfiguredByHelperAfterStart(made.helper, setting.spelled, str(setting.place),
                                             analysis.line_of(started.call), started.reason, setting.name),
                related=(setting_related(setting), (started.call, f"TensorFlow runtime started here: {started.reason}"),
                         *analysis.tf.external_related(started.call)),
            )
        if not configs:
            return
        walk = analysis.execution
        reported = set()
        for call, name in configs.items():
            started = walk.started_before(call)
            if started is None or walk.also_reached_before_start(call) or walk.only_after_an_exception(call):
                continue
            reported.add(call)
            yield Report(
                call,
                ConfiguredAfterStart(analysis.code(call.func, 60), analysis.line_of(started.call), started.reason, name,
                                     catches_runtime_error(analysis, call)),
                fix=MoveBeforeRuntimeStart(call, started),
                related=((started.call, f"TensorFlow runtime started here: {started.reason}"),
                         *analysis.tf.external_related(started.call)),
            )
        for owner, started in forked_after_start(analysis):
            line = analysis.line_of(started.call)
            in_worker = worker_calls(analysis, owner)
            # The parent set the same thing before its runtime started: the worker may set the same value again.
            set_in_parent = {configs[c] for c in configs if c not in in_worker and walk.also_reached_before_start(c)}
            for call in in_worker:
                name = configs.get(call)
                if name is None or call in reported or name in set_in_parent:
                    continue
                reported.add(call)
                yield Report(
                    call,
                    ConfiguredInForkedWorker(analysis.code(call.func, 60), owner.noun, line, started.reason, name),
                    related=((started.call, f"TensorFlow runtime started here: {started.reason}"),
                             *analysis.tf.external_related(started.call)),
                    cause=owner.construction,
                )


def _where(name: str) -> str:
    return " on a machine with a GPU" if name in GPU_ONLY_CONFIGURATION else ""
