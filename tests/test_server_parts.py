"""The language server's parts that need no client: positions in LSP's encodings, the lint thread,
the findings and fixes of a notebook's cells."""

from __future__ import annotations

import json
import threading

import pytest

import processes
from conftest import run_env, tool
from tfproc_lint.config import Config
from tfproc_lint.server import documents
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


def test_later_jobs_wait_for_the_others_and_give_way_to_new_ones():
    started, release, finished = threading.Event(), threading.Event(), threading.Event()
    done = []

    def run(job):
        if job == "block":
            started.set()
            release.wait(10)
        done.append(job)
        if job == "last":
            finished.set()

    worker = LatestOnlyWorker(run, lambda job, error: None)
    worker.submit("a.py", "block")
    assert started.wait(10)
    worker.submit("a.py", "a1 planned", later=True)  # a second look at a.py, queued first
    worker.submit("b.py", "b1 planned", later=True)
    assert not worker.is_pending("a.py")  # a later job does not hold back a.py's publication
    worker.submit("b.py", "b2")  # an edit: b1's second look is dropped
    worker.submit("c.py", "c1")
    worker.submit("d.py", "last", later=True)
    release.set()
    assert finished.wait(10)
    assert done == ["block", "b2", "c1", "a1 planned", "last"]
    worker.stop()


def test_a_notebooks_findings_and_fixes_are_what_check_lists(tmp_path):
    # Two late threading settings in cell 3: `check` lists both as safe fixes (the second applies
    # after the first); the server's findings for the cells say the same, and the second one's fix
    # gives the cells `check --fix` writes.
    pytest.importorskip("nbformat")
    import notebooks
    text = ("# %% [markdown]\nA job\n# %%\nimport tensorflow as tf\nx = tf.ones((2, 2))\n"
            "# %%\ntf.config.threading.set_inter_op_parallelism_threads(2)\n"
            "tf.config.threading.set_intra_op_parallelism_threads(2)\n")
    path = notebooks.write(tmp_path / "job.ipynb", text)
    command = [tool("tfproc-lint"), "check", "--no-cache"]
    listed = json.loads(processes.run([*command, "--format", "json", path.name], cwd=tmp_path, capture_output=True,
                                      text=True, env=run_env(), timeout=120).stdout)["findings"]
    cells = json.loads(path.read_text())["cells"]
    snapshot = documents.Snapshot(path.as_uri(), path.name, 1, notebook=True, cells=tuple(
        documents.Cell(f"cell{number}", number, "".join(cell["source"]), 1)
        for number, cell in enumerate(cells, start=1) if cell["cell_type"] == "code"))
    found = documents.planned(snapshot, Config()).by_uri["cell3"]
    assert [(d.code, d.cell, d.line, d.full_message, d.fix.applicability.value) for d in found] == [
        (f["code"], f["cell"], f["line"], f["message"], f["fix"]["applicability"]) for f in listed]

    located, program = documents.detailed(snapshot, Config())
    assert located[1].diagnostic.fix.edits is None  # it applies only after the first fix
    change, others = documents.fix_after_others(snapshot, Config(), program, located[1])
    assert [d.line for d in others] == [located[0].diagnostic.line]
    processes.run([*command, "--fix", path.name], cwd=tmp_path, env=run_env(), timeout=120, capture_output=True)
    fixed = {f"cell{number}": "".join(cell["source"]) for number, cell in enumerate(
        json.loads(path.read_text())["cells"], start=1)}
    assert {uri: after for uri, (_before, after) in change.items()} == {
        uri: fixed[uri] for uri in ("cell2", "cell3")}


def test_a_documents_findings_read_modules_from_buffers_and_forget_changed_files(tmp_path):
    """The project layer in a long-lived process: a module's buffer is read instead of its file
    (`overlaid`), and after `forget_files` a changed file counts (which modules act at import was
    kept by path before). `uses` records every file the script's imports reach, with its digest."""
    from tfproc_lint.project import forget_files
    from tfproc_lint.project_layout import overlaid

    registry = 'from shop import models\n\nMODEL_PATH = "ranker.keras"\n\n\ndef describe():\n    return MODEL_PATH\n'
    loading = registry + "\n\nMODEL = models.load(MODEL_PATH)\n"
    files = {
        "pyproject.toml": '[project]\nname = "shop"\nrequires-python = ">=3.10"\n', "shop/__init__.py": "",
        "shop/models.py": "import tensorflow as tf\n\n\ndef load(path):\n    return tf.keras.models.load_model(path)\n",
        "shop/registry.py": registry,
        "nightly.py": ('import multiprocessing as mp\n\nimport tensorflow as tf\n\nfrom shop import registry\n\n\n'
                       'def total(rows):\n    return float(tf.reduce_sum(tf.constant(rows)))\n\n\n'
                       'if __name__ == "__main__":\n    print(registry.describe())\n    with mp.Pool(4) as pool:\n'
                       '        print(pool.map(total, [[1.0], [2.0]]))\n'),
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    nightly = tmp_path / "nightly.py"
    snapshot = documents.Snapshot(nightly.as_uri(), str(nightly), 1, text=files["nightly.py"])
    config = Config(target_python=(3, 12))

    def codes() -> list[str]:
        return [d.code for d in documents.lint(snapshot, config).by_uri[snapshot.uri]]

    first = documents.lint(snapshot, config)
    assert first.by_uri[snapshot.uri] == []
    assert {str(tmp_path / "shop" / name) for name in ("__init__.py", "models.py", "registry.py")} <= set(first.uses)
    module = str(tmp_path / "shop" / "registry.py")
    forget_files([module])  # as the server does for each change: the buffer differs from the file
    with overlaid({module: loading}):
        assert codes() == ["TFP201"]  # the buffer, not the file
    forget_files([module])  # closed unsaved
    assert codes() == []
    (tmp_path / "shop" / "registry.py").write_text(loading)
    assert codes() == []  # what was worked out from the file is kept...
    forget_files([module])
    assert codes() == ["TFP201"]  # ...until it is forgotten
