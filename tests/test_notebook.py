"""Jupyter notebooks: IPython masking, positions per cell, reading errors, and fixes that touch only
the edited cells' sources (through the real command where the user would see it)."""

from __future__ import annotations

import json
import subprocess
import textwrap

import nbformat
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import processes
from conftest import run_env, tool
from notebooks import notebook, with_output, write
from tfproc_lint.diagnostics import Diagnostic, Edit, Fix, Applicability
from tfproc_lint.engine import lint_notebook
from tfproc_lint.magics import mask_cell
from tfproc_lint.notebook import CellBoundaryError, program_of, read_notebook
from tfproc_lint.source import SourceError

SPAWN_CELL_WORKER = """# %% [markdown]
# Count tokens in parallel
# %%
%load_ext autoreload
import multiprocessing as mp
import tensorflow as tf
# %%
def count(line):
    return int(tf.size(tf.strings.split(line)))
# %%
!ls
with mp.get_context("spawn").Pool(2) as pool:
    counts = pool.map(count, ["a b", "c"])
"""

PER_TASK = """# %%
import multiprocessing as mp

import numpy as np
import tensorflow as tf
# %%
def score(path):
    model = tf.keras.models.load_model("ranker.keras")
    return model.predict(np.load(path), verbose=0).mean()
# %%
files = !ls shards
with mp.Pool(2) as pool:
    means = pool.map(score, files)
"""

# The TFP102 rewrite changes the last line of cell 2 and the first of cell 3, which touch.
ACROSS_CELLS = """# %%
import functools
import multiprocessing as mp

import numpy as np
import tensorflow as tf


def predict_rows(model, rows):
    return model.predict(rows, verbose=0)
# %%
model = tf.keras.models.load_model("ranker.keras")
# %%
with mp.get_context("fork").Pool(2) as pool:
    scores = pool.map(functools.partial(predict_rows, model), [np.ones((2, 3))])
"""


def check(*args, cwd) -> subprocess.CompletedProcess:
    return processes.run([tool("tfproc-lint"), "check", *args], cwd=cwd, env=run_env(), capture_output=True,
                         text=True, check=False, timeout=120)


def python_compiles(text: str) -> bool:
    compile(text, "<cell>", "exec", dont_inherit=True)
    return True


# masking ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("source", [
    "%matplotlib inline\nimport os",
    "!pip install tensorflow\nx = 1",
    "files = !ls\nout = %sx ls",
    "?os.path\nos.path??\n%pinfo os",
    "for i in range(3):\n    !echo $i\n    %time f(i)",
    "if True:\n    x = 1\n    %env A=1",
    "%%bash\necho hi\nfor x in y; do :; done",
    "%%writefile helper.py\ndef f(:\n    pass",
    "/print 1\n;print 2\n,print a b",
    "!ls \\\n  -la\nx = 1",
])
def test_masked_cells_parse_and_keep_their_lines(source) -> None:
    masked = mask_cell(source)
    assert python_compiles(masked.text)
    assert masked.text.count("\n") == source.count("\n")
    lines = source.splitlines()
    for mask in masked.masks:
        assert mask.original == lines[mask.line]
    for number, (before, after) in enumerate(zip(lines, masked.text.splitlines())):
        assert after == before or number in {m.line for m in masked.masks}


@pytest.mark.parametrize("source", [
    "%%writefile tokens.py\nimport os\n\ndef f(x):\n    return x",  # the last masked line has no line end
    "%%bash\necho hi",
    "x = 1\n!ls",
    "!ls",
])
def test_a_cell_comes_back_as_written(source) -> None:
    """What --diff and --fix compare with: a cell whose last masked line had no line end once
    raised IndexError (`check --diff` on fixtures/lint/TFP204/good_spawn_pool_cell_worker.ipynb)."""
    assert program_of([(1, source)]).sources() == {1: source}


def test_python_cell_magics_keep_their_body_and_line_magics_their_statement() -> None:
    masked = mask_cell("%%time\nmodel.fit(x)\n%time model.predict(x)")
    assert masked.text.splitlines()[1] == "model.fit(x)"
    line = masked.text.splitlines()[2]
    assert line.index("model.predict") == "%time model.predict(x)".index("model.predict")  # same column
    assert python_compiles(masked.text)


def test_python_lines_that_look_like_magics_are_left_alone() -> None:
    source = textwrap.dedent('''\
        same = (a
                != b)
        text = """
        %s is not a magic
        !neither is this
        """
        total = (1 +
                 % 2)
        ''')
    masked = mask_cell(source)
    assert [m.line for m in masked.masks] == []
    assert masked.text == source


# the program and positions ---------------------------------------------------------------------------
def test_cells_are_numbered_among_all_cells_and_lines_within_the_cell(tmp_path) -> None:
    path = write(tmp_path / "n.ipynb", SPAWN_CELL_WORKER)
    program = read_notebook(path.read_bytes()).program
    (finding,) = lint_notebook(program, str(path))
    assert (finding.code, finding.cell, finding.line, finding.col) == ("TFP204", 4, 3, 22)
    (related,) = finding.related
    assert (related.cell, related.line, related.col) == (3, 1, 4)


def test_empty_code_cells_and_cells_without_final_newline() -> None:
    program = program_of([(1, "import os"), (2, ""), (4, "x = 1\ny = 2\n"), (5, "z = 3")])
    assert program.text == "import os\nx = 1\ny = 2\nz = 3\n"
    assert [program.locate(line) for line in (1, 2, 3, 4)] == [(1, 1), (4, 1), (4, 2), (5, 1)]
    assert program.sources() == {1: "import os", 2: "", 4: "x = 1\ny = 2\n", 5: "z = 3"}


def test_edits_stay_in_their_cell_and_keep_ipython_lines() -> None:
    program = program_of([(1, "%pip install x\nimport os"), (2, "x = 1")])
    assert program.text == "pass\nimport os\nx = 1\n"  # offsets below are into this text
    changed = program.with_edits([Edit(5, 14, "import sys\nimport os"), Edit(15, 20, "x = 2")])
    assert changed.sources() == {1: "%pip install x\nimport sys\nimport os", 2: "x = 2"}
    inserted = program.with_edits([Edit(15, 15, "y = 0\n")])  # at a boundary: the next cell's start
    assert inserted.sources() == {1: "%pip install x\nimport os", 2: "y = 0\nx = 1"}
    with pytest.raises(CellBoundaryError):
        program.with_edits([Edit(10, 17, "")])  # from cell 1 into cell 2
    with pytest.raises(CellBoundaryError):
        program.with_edits([Edit(0, 4, "")])  # rewrites the masked `%pip` line


@pytest.mark.slow
def test_a_refused_fix_leaves_the_notebook_byte_identical(tmp_path) -> None:
    """The model is loaded in one cell and sent by the pool in the next: the rewrite would cross
    cells (refused at the edit level, see the test below), and before that the fix builder already
    refuses it, because the forked workers would load the model after the parent started TensorFlow."""
    path = write(tmp_path / "n.ipynb", ACROSS_CELLS)
    findings = {d.code: d for d in lint_notebook(read_notebook(path.read_bytes()).program, str(path))}
    assert findings["TFP102"].fix is None
    assert "(manual edit required: " in findings["TFP102"].full_message
    before = path.read_bytes()
    result = check("--fix", "--unsafe-fixes", "n.ipynb", cwd=tmp_path)
    assert result.returncode == 1 and path.read_bytes() == before


def test_refuse_crossing_fix_keeps_fixes_within_one_cell() -> None:
    program = program_of([(1, "import os"), (2, "x = 1")])
    inside = Diagnostic("TFP301", "m", "n.ipynb", 2, 0, fix=Fix("t", Applicability.UNSAFE, (Edit(10, 15, "x = 2\n"),)))
    assert program.refuse_crossing_fix(inside) is inside
    across = Diagnostic("TFP301", "m", "n.ipynb", 2, 0, fix=Fix("t", Applicability.UNSAFE, (Edit(5, 12, ""),)))
    assert program.refuse_crossing_fix(across).fix is None


def test_messages_name_other_lines_by_cell(tmp_path) -> None:
    path = write(tmp_path / "n.ipynb", PER_TASK)
    (finding,) = lint_notebook(read_notebook(path.read_bytes()).program, str(path))
    assert "(cell 2, line 2: `tf.keras.models.load_model" in finding.message


# reading ---------------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("data,reason", [
    (b'{"cells": [', "not a notebook: invalid JSON"),
    (b"[1, 2]", "not a notebook"),
    (b"{}", "not a notebook"),
    (b'{"nbformat": 3, "nbformat_minor": 0, "worksheets": [], "metadata": {}}', "format 4"),
    (b"\xff\xfe{}", "cannot decode as UTF-8"),
])
def test_bad_notebooks_get_one_line_and_the_run_goes_on(tmp_path, data, reason) -> None:
    with pytest.raises(SourceError) as error:
        read_notebook(data)
    assert reason in str(error.value) and "\n" not in str(error.value)
    (tmp_path / "broken.ipynb").write_bytes(data)
    write(tmp_path / "good.ipynb", SPAWN_CELL_WORKER)
    result = check("broken.ipynb", "good.ipynb", cwd=tmp_path)  # named: a walk pre-filters the bytes first
    assert result.returncode == 1
    (line,) = [line for line in result.stderr.splitlines() if "broken.ipynb" in line]
    assert reason in line
    assert "good.ipynb:cell 4:3:23: TFP204" in result.stdout


def test_without_nbformat_a_notebook_gets_one_line(tmp_path) -> None:
    blocker = tmp_path / "blocked" / "nbformat"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('nbformat is not installed')\n")
    write(tmp_path / "n.ipynb", SPAWN_CELL_WORKER)
    (tmp_path / "ok.py").write_text("import os\n")
    env = run_env()
    env["PYTHONPATH"] = f"{blocker.parent}:{env.get('PYTHONPATH', '')}"
    result = processes.run([tool("tfproc-lint"), "check", "n.ipynb", "ok.py"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, check=False, timeout=120)
    assert result.returncode == 1
    assert result.stderr == ("tfproc-lint: n.ipynb: checking notebooks needs nbformat: "
                             "pip install 'nbformat>=5.7' (tfproc-lint's `notebook` extra)\n")


def test_insertions_after_the_last_line_go_to_the_last_cell_with_text() -> None:
    program = program_of([(1, "x = 1"), (2, "y = 2"), (3, "")])
    assert program.with_edits([Edit(12, 12, "z = 3\n")]).sources() == {1: "x = 1", 2: "y = 2\nz = 3", 3: ""}


def test_other_languages_and_checkpoints_are_skipped(tmp_path) -> None:
    r_kernel = {"kernelspec": {"name": "ir", "display_name": "R", "language": "R"}, "language_info": {"name": "R"}}
    write(tmp_path / "r.ipynb", SPAWN_CELL_WORKER, metadata=r_kernel)
    (tmp_path / ".ipynb_checkpoints").mkdir()
    write(tmp_path / ".ipynb_checkpoints" / "n-checkpoint.ipynb", SPAWN_CELL_WORKER)
    result = check(".", cwd=tmp_path)
    assert (result.returncode, result.stdout.strip()) == (0, "All checks passed."), result.stderr


@pytest.mark.slow
def test_noqa_in_a_cell(tmp_path) -> None:
    source = SPAWN_CELL_WORKER.replace('["a b", "c"])', '["a b", "c"])  # noqa: TFP204')
    write(tmp_path / "n.ipynb", source)
    assert check("n.ipynb", cwd=tmp_path).returncode == 0


# fixing ----------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_fix_rewrites_only_the_edited_cells_sources(tmp_path) -> None:
    node = with_output(notebook(PER_TASK), 3, "0.25\n")
    node.metadata["custom"] = {"keep": [1, 2]}
    path = tmp_path / "n.ipynb"
    nbformat.write(node, path)
    before = json.loads(path.read_text(encoding="utf-8"))
    result = check("--fix", "--unsafe-fixes", "n.ipynb", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    after_text = path.read_text(encoding="utf-8")
    nbformat.validate(nbformat.reads(after_text, as_version=nbformat.NO_CONVERT))
    after = json.loads(after_text)
    changed = [i for i, (a, b) in enumerate(zip(before["cells"], after["cells"])) if a != b]
    assert changed == [1, 2]
    for index in changed:  # only the source differs
        assert {k: v for k, v in before["cells"][index].items() if k != "source"} == \
               {k: v for k, v in after["cells"][index].items() if k != "source"}
    assert before["metadata"] == after["metadata"] and after["cells"][2]["outputs"] == before["cells"][2]["outputs"]
    assert "initializer=" in "".join(after["cells"][2]["source"])
    assert "".join(after["cells"][2]["source"]).startswith("files = !ls shards\n")  # the shell line is back
    assert after_text == nbformat.writes(nbformat.reads(after_text, as_version=4)) + "\n"  # Jupyter's layout
    assert check("n.ipynb", cwd=tmp_path).returncode == 0


@pytest.mark.slow
def test_a_notebook_without_an_applied_fix_is_byte_identical(tmp_path) -> None:
    path = write(tmp_path / "n.ipynb", SPAWN_CELL_WORKER)
    before, mtime = path.read_bytes(), path.stat().st_mtime_ns
    result = check("--fix", "--unsafe-fixes", "n.ipynb", cwd=tmp_path)
    assert result.returncode == 1
    assert path.read_bytes() == before and path.stat().st_mtime_ns == mtime


@pytest.mark.slow
def test_diff_is_per_cell(tmp_path) -> None:
    write(tmp_path / "n.ipynb", PER_TASK)
    result = check("--diff", "--unsafe-fixes", "n.ipynb", cwd=tmp_path)
    assert result.returncode == 1
    headers = [line for line in result.stdout.splitlines() if line.startswith(("--- ", "+++ "))]
    assert headers == ["--- a/n.ipynb:cell 2", "+++ b/n.ipynb:cell 2", "--- a/n.ipynb:cell 3", "+++ b/n.ipynb:cell 3"]
    assert "+with mp.Pool(2, initializer=" in result.stdout


@pytest.mark.slow
def test_colab_layout_is_kept(tmp_path) -> None:
    """Two-space indentation, keys in the file's order, sources as strings: only the source changes."""
    node = json.loads(nbformat.writes(notebook(PER_TASK)))
    data = {"nbformat": 4, "nbformat_minor": 0, "metadata": {"colab": {"provenance": []}, **node["metadata"]},
            "cells": [{"cell_type": "code", "source": "".join(c["source"]), "metadata": {"id": f"c{i}"},
                       "execution_count": None, "outputs": []} for i, c in enumerate(node["cells"])]}
    text = json.dumps(data, indent=2, ensure_ascii=False)  # no final newline, as Colab writes it
    path = tmp_path / "colab.ipynb"
    path.write_text(text, encoding="utf-8")
    assert check("--fix", "--unsafe-fixes", "colab.ipynb", cwd=tmp_path).returncode == 0
    after = path.read_text(encoding="utf-8")
    fixed = json.loads(after)
    assert isinstance(fixed["cells"][2]["source"], str) and "initializer=" in fixed["cells"][2]["source"]
    expected = json.loads(text)
    for index in (1, 2):
        expected["cells"][index]["source"] = fixed["cells"][index]["source"]
    assert after == json.dumps(expected, indent=2, ensure_ascii=False)


@pytest.mark.slow
def test_a_layout_that_cannot_be_reproduced_is_not_rewritten(tmp_path) -> None:
    text = nbformat.writes(notebook(PER_TASK)).replace('"cell_type": "code",', '"cell_type" :  "code",')
    path = tmp_path / "odd.ipynb"
    path.write_text(text, encoding="utf-8")
    result = check("--fix", "--unsafe-fixes", "odd.ipynb", cwd=tmp_path)
    assert result.returncode == 1
    assert "cannot reproduce this notebook's JSON layout" in result.stderr
    assert path.read_text(encoding="utf-8") == text


# Python is never taken for IPython ------------------------------------------------------------------
def _hypothesmith():
    """hypothesmith, imported when a test first draws a program: its import and grammars cost seconds
    that every collection of the suite (`-k`, `-m` included) used to pay."""
    import hypothesmith

    return hypothesmith


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # hypothesmith compiles what it generates
@settings(max_examples=150, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
@given(st.deferred(lambda: st.one_of(_hypothesmith().from_grammar(), _hypothesmith().from_node())))
def test_valid_python_cells_are_never_masked(source: str) -> None:
    masked = mask_cell(source)
    assert masked.masks == () and masked.text == source


# TFP201's advice in a notebook -------------------------------------------------------------------------
FORK_AFTER_MODEL = """\
# %%
import multiprocessing as mp
import numpy as np
import tensorflow as tf
{import_line}
# %%
encoder = tf.keras.Sequential([tf.keras.Input((16,)), tf.keras.layers.Dense(8)])
embeddings = encoder.predict(np.random.rand(100, 16).astype("float32"), verbose=0)
{definition}
# %%
with mp.Pool(2) as pool:
    neighbours = pool.map(nearest, np.array_split(embeddings, 4))
"""
WORKER = """
def nearest(queries):
    scores = tf.matmul(tf.random.normal((768, 768)), tf.random.normal((768, 768)))
    return tf.math.top_k(scores[: len(queries)], k=5).indices.numpy()
"""


def test_tfp201_in_a_notebook_advises_a_module_and_a_spawn_context_not_a_main_guard(tmp_path) -> None:
    """A notebook has no `if __name__ == "__main__":` to move a start under, and spawned children
    cannot import a function the notebook defines (TFP204): the advice is to move the worker into
    a module, then start the pool from a spawn context."""
    from tfproc_lint.config import Config

    path = write(tmp_path / "nb.ipynb", FORK_AFTER_MODEL.format(import_line="", definition=WORKER))
    [finding] = [d for d in lint_notebook(read_notebook(path.read_bytes()).program, str(path), Config())
                 if d.code == "TFP201"]
    assert "__main__" not in finding.message
    assert "move `nearest` into a module (a .py file beside the notebook) and import it; create the pool from " \
           "multiprocessing.get_context(\"spawn\")" in finding.message
    assert finding.fix is None
    assert "spawned workers cannot import `nearest`, defined in the notebook" in finding.full_message


def test_no_finding_in_a_notebook_fixture_advises_a_main_guard() -> None:
    """Every rule's message and fix reason on every notebook fixture and probe notebook: none tells
    the user to use `if __name__ == "__main__":`, which means nothing in a notebook."""
    from conftest import ROOT

    from tfproc_lint.config import Config, apply_options

    config = apply_options(Config(), {"extend-select": ["TFP3"]}, "test")
    paths = sorted(ROOT.glob("fixtures/lint/*/*.ipynb")) + sorted(ROOT.glob("runtime_probe/scenarios/*.ipynb"))
    messages = [d.message for path in paths
                for d in lint_notebook(read_notebook(path.read_bytes()).program, str(path), config)]
    assert any("TFP201" in str(path) for path in paths) and messages
    assert not [message for message in messages if "__name__" in message]
