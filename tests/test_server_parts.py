"""The language server's parts that need no client: positions in LSP's encodings, the lint thread."""

from __future__ import annotations

import threading

import pytest

from tfproc_lint.server.positions import UTF8, UTF16, UTF32, LineIndex
from tfproc_lint.server.worker import LatestOnlyWorker


@pytest.mark.parametrize("encoding, column", [(UTF16, 11), (UTF8, 14), (UTF32, 10)])
def test_columns_count_the_negotiated_code_units(encoding, column):
    # "x = '😀é'; y": the emoji is 2 UTF-16 units and 4 UTF-8 bytes, "é" 1 and 2.
    text = "a = 1\nx = '\U0001F600é'; y = 2\n"
    index = LineIndex(text, encoding)
    character = text.split("\n")[1].index("y")
    assert index.to_client(1, character) == (1, column)
    assert index.from_client(1, column) == (1, character)
    assert index.offset_to_client(text.index("y")) == (1, column)


def test_offsets_at_the_end_of_the_text():
    assert LineIndex("a\nb").offset_to_client(3) == (1, 1)  # no final newline: end of the last line
    assert LineIndex("a\nb\n").offset_to_client(4) == (2, 0)  # after the final newline
    assert LineIndex("").offset_to_client(0) == (0, 0)
    assert LineIndex("a\r\nb\n").end_of_line(0) == (0, 1)  # the line end is not text


def test_the_worker_keeps_only_the_newest_job_per_document_and_survives_errors():
    started, release, finished = threading.Event(), threading.Event(), threading.Event()
    done, errors = [], []

    def run(job):
        if job == "block":
            started.set()
            release.wait(10)
        if job == "boom":
            raise RuntimeError("a bug")
        done.append(job)
        if job == "last":
            finished.set()

    worker = LatestOnlyWorker(run, lambda job, error: errors.append((job, str(error))))
    worker.submit("a", "block")
    assert started.wait(10)
    for version in ("a1", "a2", "a3"):  # typed while "block" runs: only a3 is still wanted
        worker.submit("a.py", version)
    worker.submit("b.py", "boom")
    worker.submit("c.py", "c1")
    worker.submit("d.py", "last")
    release.set()
    assert finished.wait(10)
    assert done == ["block", "a3", "c1", "last"]
    assert errors == [("boom", "a bug")]
    assert worker.superseded == 2
    worker.stop()
