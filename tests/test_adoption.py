"""Adopting tfproc-lint on an existing code base: --statistics, --exit-zero, --add-noqa (real command).

The noqa tests hold with flake8's semantics (`# noqa: TFP201` silences TFP201 only): they never
rely on a `# noqa: CODE` silencing a code it does not name.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess

import nbformat
import pytest

import processes
from conftest import run_env, tool
from notebooks import write

# Two TFP201 findings (two fork pools after the runtime started) and a TFP301.
PROJECT = (
    "import multiprocessing as mp\n"
    "import tensorflow as tf\n"
    "\n"
    "def work(x):\n"
    "    return float(tf.reduce_sum(tf.ones((512, 512)) * x))\n"
    "\n"
    "def per_task(x):\n"
    "    model = tf.keras.models.load_model('m.keras')\n"
    "    return model(x)\n"
    "\n"
    "if __name__ == '__main__':\n"
    "    warm = tf.matmul(tf.ones((512, 512)), tf.ones((512, 512)))\n"
    "    with mp.Pool(2) as pool:\n"
    "        print(pool.map(work, range(4)))\n"
    "    with mp.Pool(2) as other:  # keep: E501\n"
    "        print(other.map(per_task, range(4)))\n"
)
CLEAN = "import tensorflow as tf\nprint(tf.ones(2))\n"
NOTEBOOK = """# %%
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


def check(*args, cwd) -> subprocess.CompletedProcess:
    return processes.run([tool("tfproc-lint"), "check", *args], cwd=cwd, env=run_env(), capture_output=True,
                         text=True, check=False, timeout=120)


@pytest.mark.slow
def test_statistics_counts_per_rule(tmp_path) -> None:
    (tmp_path / "job.py").write_text(PROJECT, encoding="utf-8")
    result = check("--statistics", "job.py", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "  2  TFP201  [ ] runtime-initialised-before-fork",
        "  1  TFP301  [ ] missing-worker-initializer",
        "Found 3 findings (3 fixable with --fix --unsafe-fixes).",
    ]
    as_json = json.loads(check("--statistics", "--format", "json", "job.py", cwd=tmp_path).stdout)
    assert as_json == [{"code": "TFP201", "name": "runtime-initialised-before-fork", "count": 2, "fixable": 0},
                       {"code": "TFP301", "name": "missing-worker-initializer", "count": 1, "fixable": 0}]
    assert check("--statistics", "--format", "sarif", "job.py", cwd=tmp_path).returncode == 2
    assert check("--statistics", "-q", "job.py", cwd=tmp_path).stdout.count("\n") == 2
    fixed = check("--statistics", "--fix", "--unsafe-fixes", "job.py", cwd=tmp_path)  # counts what remains
    assert fixed.stdout.splitlines() == ["No findings (fixed 3)."]


def test_statistics_marks_rules_with_an_applicable_fix() -> None:
    from tfproc_lint.diagnostics import Applicability, Diagnostic, Edit, FileResult, Fix
    from tfproc_lint.output import Run
    from tfproc_lint.output.statistics import render

    fix = Fix("rewrite", Applicability.UNSAFE, (Edit(0, 0, ""),))
    findings = [Diagnostic("TFP301", "m", "a.py", line, 0, fix=fix if line == 1 else None) for line in (1, 2)]
    findings.append(Diagnostic("TFP101", "m", "a.py", 3, 0))
    for unsafe, mark in ((False, "[ ]"), (True, "[*]")):
        lines = render(Run([FileResult("a.py", findings)], unsafe_fixes=unsafe)).splitlines()
        assert lines[:2] == [f"  2  TFP301  {mark} missing-worker-initializer",
                             "  1  TFP101  [ ] session-crosses-process"]


def test_exit_zero(tmp_path) -> None:
    (tmp_path / "job.py").write_text(PROJECT, encoding="utf-8")
    (tmp_path / "broken.py").write_text("import tensorflow, multiprocessing\nmultiprocessing.Pool(\n")
    result = check("--exit-zero", "job.py", "broken.py", cwd=tmp_path)
    assert result.returncode == 0 and "TFP201" in result.stdout and "broken.py" in result.stderr
    assert check("--exit-zero", "--format", "xml", "job.py", cwd=tmp_path).returncode == 2


def test_add_noqa_marks_each_finding_once_and_keeps_codes(tmp_path) -> None:
    path = tmp_path / "job.py"
    path.write_bytes(PROJECT.replace("\n", "\r\n").encode())  # CRLF kept
    os.chmod(path, 0o750)
    (tmp_path / "clean.py").write_text(CLEAN, encoding="utf-8")
    clean_mtime = (tmp_path / "clean.py").stat().st_mtime_ns
    result = check("--add-noqa", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Added 3 noqa comments to 1 file.\n"
    lines = path.read_bytes().decode().split("\r\n")
    assert lines[12] == "    with mp.Pool(2) as pool:  # noqa: TFP201"
    assert lines[14] == "    with mp.Pool(2) as other:  # keep: E501  # noqa: TFP201"
    assert lines[15] == "        print(other.map(per_task, range(4)))  # noqa: TFP301"
    assert stat.S_IMODE(path.stat().st_mode) == 0o750
    assert (tmp_path / "clean.py").stat().st_mtime_ns == clean_mtime
    assert check(".", cwd=tmp_path).returncode == 0  # all silenced
    before = path.read_bytes()
    again = check("--add-noqa", ".", cwd=tmp_path)
    assert again.stdout == "Added 0 noqa comments to 0 files.\n" and path.read_bytes() == before


def test_add_noqa_merges_with_an_existing_noqa_comment(tmp_path) -> None:
    source = PROJECT.replace("    with mp.Pool(2) as pool:\n", "    with mp.Pool(2) as pool:  # noqa: E501,F401\n")
    (tmp_path / "job.py").write_text(source, encoding="utf-8")
    check("--add-noqa", "--select", "TFP201", "job.py", cwd=tmp_path)
    lines = (tmp_path / "job.py").read_text(encoding="utf-8").splitlines()
    assert lines[12] == "    with mp.Pool(2) as pool:  # noqa: E501,F401, TFP201"
    assert lines[15] == "        print(other.map(per_task, range(4)))"  # TFP301 was not selected


@pytest.mark.parametrize("comment", ["#noqa", "#noqa: E501", "#  noqa"])
def test_add_noqa_adds_its_own_comment_after_one_that_silences_nothing(tmp_path, comment: str) -> None:
    """flake8 (and check) read only `# noqa`: `#noqa` silences nothing, so --add-noqa must not
    take it for a bare `# noqa` and leave the finding reported."""
    source = PROJECT.replace("    with mp.Pool(2) as pool:\n", f"    with mp.Pool(2) as pool:  {comment}\n")
    (tmp_path / "job.py").write_text(source, encoding="utf-8")
    assert check("--select", "TFP201", "job.py", cwd=tmp_path).returncode == 1
    check("--add-noqa", "--select", "TFP201", "job.py", cwd=tmp_path)
    lines = (tmp_path / "job.py").read_text(encoding="utf-8").splitlines()
    assert lines[12] == f"    with mp.Pool(2) as pool:  {comment}  # noqa: TFP201"
    assert check("--select", "TFP201", "job.py", cwd=tmp_path).returncode == 0


def test_add_noqa_leaves_lines_that_cannot_take_a_comment(tmp_path) -> None:
    source = PROJECT.replace("    with mp.Pool(2) as pool:\n", "    with mp.Pool(2) \\\n            as pool:\n")
    (tmp_path / "job.py").write_text(source, encoding="utf-8")
    result = check("--add-noqa", "--select", "TFP201", "job.py", cwd=tmp_path)
    assert result.returncode == 1
    assert "job.py:13: no `# noqa` added" in result.stderr
    assert "Added 1 noqa comment to 1 file." in result.stdout
    compile((tmp_path / "job.py").read_text(encoding="utf-8"), "job.py", "exec")


def test_add_noqa_in_a_notebook(tmp_path) -> None:
    path = write(tmp_path / "n.ipynb", NOTEBOOK)
    result = check("--add-noqa", "n.ipynb", cwd=tmp_path)
    assert result.stdout == "Added 1 noqa comment to 1 file.\n", result.stderr
    node = nbformat.read(path, as_version=4)
    nbformat.validate(node)
    assert node.cells[2].source == (
        '!ls\nwith mp.get_context("spawn").Pool(2) as pool:\n'
        '    counts = pool.map(count, ["a b", "c"])  # noqa: TFP204')
    assert check("n.ipynb", cwd=tmp_path).returncode == 0
    assert check("--add-noqa", "--fix", "n.ipynb", cwd=tmp_path).returncode == 2
