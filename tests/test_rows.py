"""Which expression of a task is a row (analysis/rows.py), asked without a rule: the task's item and
cheap conversions of it are rows, a batch of one made of a row is found, a decoded file is not a row."""

from __future__ import annotations

import textwrap

import libcst as cst

from tfproc_lint.analysis import rows
from tfproc_lint.analysis.file_analysis import FileAnalysis
from tfproc_lint.config import Config

SOURCE = """\
    import numpy as np
    import tensorflow as tf

    model = tf.keras.models.load_model("m.keras")

    def score(row):
        features = np.asarray(row).astype("float32")
        return model.predict_on_batch(features.reshape(1, -1))

    def classify(path):
        image = tf.io.decode_jpeg(tf.io.read_file(path))
        return model.predict_on_batch(image[None])

    def score_partition(batches):
        for batch in batches:
            for index, row in enumerate(batch.to_numpy()):
                yield model.predict(np.array([row]))
"""


def analyse() -> FileAnalysis:
    return FileAnalysis(cst.parse_module(textwrap.dedent(SOURCE)), "job.py", Config())


def test_a_batch_of_one_made_from_the_item() -> None:
    analysis = analyse()
    run = rows.one_item_run(analysis, _function(analysis, "score"))
    assert analysis.code(run) == 'model.predict_on_batch(features.reshape(1, -1))'
    assert rows.one_item_run(analysis, _function(analysis, "classify")) is None  # decoded from a file


def test_the_rows_of_a_partition_are_the_loops_targets() -> None:
    analysis = analyse()
    function = _function(analysis, "score_partition")
    items = rows.TaskItems(analysis, function)
    assert items.params == {"batches"}
    assert rows.one_row_run(analysis, function.node.body, items) is None  # the parameter is a partition
    loop_rows = items.loop_rows()
    assert loop_rows.params == {"batch", "index", "row"}
    run = rows.one_row_run(analysis, function.node.body, loop_rows)
    assert analysis.code(run) == "model.predict(np.array([row]))"


def _function(analysis: FileAnalysis, name: str):
    return next(info for info in analysis.symbols.functions.values() if info.node.name.value == name)
