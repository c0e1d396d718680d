"""The per-file index of calls by the name they call (analysis/calls.py) answers what a loop that
resolves every call would, in the same order; questions marked `per_file` are answered once."""

from __future__ import annotations

import textwrap

import libcst as cst

from tfproc_lint.analysis import settings, start_methods
from tfproc_lint.analysis.file_analysis import FileAnalysis
from tfproc_lint.config import Config
from tfproc_lint.knowledge import processes
from tfproc_lint.knowledge import environment

SOURCE = """\
    import multiprocessing as mp
    import os
    import tensorflow as tf
    from multiprocessing import set_start_method as choose

    Session = tf.compat.v1.Session
    os.environ["TF_FORCE_GPU_ALLOW_GROWTH"] = "true"

    def work(x):
        with Session() as sess:
            return sess.run(x)

    def main():
        import multiprocessing
        multiprocessing.set_start_method("spawn")
        for gpu in tf.config.list_physical_devices("GPU"):
            tf.config.experimental.set_memory_growth(gpu, True)

    if __name__ == "__main__":
        choose("fork")
        mp.set_start_method("spawn", force=True)
        with mp.Pool(2) as pool:
            print(pool.map(work, range(4)))
"""


def analyse(source: str = SOURCE) -> FileAnalysis:
    return FileAnalysis(cst.parse_module(textwrap.dedent(source)), "job.py", Config())


def test_the_index_answers_as_resolving_every_call_does() -> None:
    analysis = analyse()
    resolve = analysis.classifier.qualified_name
    names = [resolve(site.node.func, site.scope, site.order) for site in analysis.symbols.calls]
    assert list(analysis.calls.resolved()) == list(zip(analysis.symbols.calls, names))
    for wanted in (processes.SET_START_METHOD, {processes.SET_START_METHOD, "tensorflow.Session"}, "no.such.name"):
        group = {wanted} if isinstance(wanted, str) else wanted
        expected = [site for site, name in zip(analysis.symbols.calls, names) if name in group]
        assert analysis.calls.named(wanted) == expected
    spelled = [analysis.code(site.node) for site in analysis.calls.named(processes.SET_START_METHOD)]
    assert spelled == ['multiprocessing.set_start_method("spawn")', 'choose("fork")',
                       'mp.set_start_method("spawn", force=True)']
    assert [analysis.code(site.node) for site in analysis.calls.named("tensorflow.Session")] == ["Session()"]


def test_per_file_questions_are_answered_once() -> None:
    analysis = analyse()
    for question in (settings.memory_limits, settings.configuration_calls, start_methods.set_start_method_calls):
        assert question(analysis) is question(analysis)
    assert len(settings.memory_limits(analysis)) == 2  # set_memory_growth, TF_FORCE_GPU_ALLOW_GROWTH
    assert settings.memory_limits(analysis) is not settings.memory_limits(analyse())
    assert [setting.keys for setting in settings.environment_settings(analysis, environment.GPU_MEMORY_ENVIRONMENT)] \
        == [("TF_FORCE_GPU_ALLOW_GROWTH",)]
