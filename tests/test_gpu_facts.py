"""TFP401's detectors as typed facts (analysis/gpu_workers.py, analysis/engine_gpus.py), asked
without the rule: which workers share the GPUs unlimited, and what each engine asks for."""

from __future__ import annotations

import textwrap

import libcst as cst

from tfproc_lint.analysis import engine_gpus
from tfproc_lint.analysis.file_analysis import FileAnalysis
from tfproc_lint.analysis.gpu_workers import GroupKind, gpu_worker_groups
from tfproc_lint.config import Config


def analyse(source: str) -> FileAnalysis:
    return FileAnalysis(cst.parse_module(textwrap.dedent(source)), "job.py", Config())


PROCESSES = """\
    import multiprocessing as mp
    import tensorflow as tf

    def train(i):
        with tf.device("/GPU:0"):
            return tf.reduce_sum(tf.ones([i]))

    if __name__ == "__main__":
        with mp.get_context("spawn").Pool(4) as pool:
            pool.map(train, range(8))
        for i in range(2):
            mp.get_context("spawn").Process(target=train, args=(i,)).start()
        first = mp.get_context("spawn").Process(target=train, args=(0,))
        second = mp.get_context("spawn").Process(target=train, args=(1,))
        first.start()
        second.start()
"""


def test_worker_groups_by_kind() -> None:
    analysis = analyse(PROCESSES)
    groups = gpu_worker_groups(analysis)
    assert [(group.kind, group.workers, [analysis.line_of(o.construction) for o in group.owners])
            for group in groups] == [(GroupKind.POOL, 4, [9]), (GroupKind.PROCESS_LOOP, None, [12]),
                                     (GroupKind.PROCESSES, None, [13, 14])]
    assert all(group.owner is group.owners[0] for group in groups)


def test_a_memory_limit_in_the_workers_leaves_no_group() -> None:
    limited = PROCESSES.replace('    def train(i):\n', '    def train(i):\n'
                                '        tf.config.experimental.set_memory_growth(gpu, True)\n')
    assert gpu_worker_groups(analyse(limited)) == []


RAY = """\
    import ray
    import tensorflow as tf

    SHARE = 0.25

    @ray.remote(num_gpus=SHARE)
    def embed(x):
        return tf.reduce_sum(x)
"""


def test_a_ray_share_of_one_gpu() -> None:
    analysis = analyse(RAY)
    [share] = engine_gpus.ray_gpu_shares(analysis)
    assert (share.info.node.name.value, analysis.code(share.gpus), share.value) == ("embed", "SHARE", 0.25)
    assert engine_gpus.ray_gpu_shares(analyse(RAY.replace("0.25", "1"))) == []
