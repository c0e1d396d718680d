"""The flake8 route for notebooks: the real nbqa runs flake8 with our plugin on each notebook.

nbqa writes a notebook's cells to a temporary `*_nbqa_ipynb.py` file, which the plugin lints as a
notebook (so TFP204 applies), and maps the positions back as `path:cell_N:line:col`, where nbqa's
N counts code cells only (tfproc-lint and Ruff count every cell).
"""

from __future__ import annotations

import re
import shutil

import pytest

import processes
from conftest import ROOT, run_env, tool
from expectations import code_cells, expected_in

NBQA_LINE = re.compile(r"^(?P<path>[^:]+):cell_(?P<cell>\d+):(?P<line>\d+):(?P<col>\d+): (?P<code>TFP\d{3}) ")
NOTEBOOKS = [ROOT / "fixtures" / "lint" / "TFP204" / "bad_spawn_pool_cell_worker.ipynb",
             ROOT / "fixtures" / "lint" / "TFP201" / "bad_model_cell_then_fork_pool.ipynb",
             ROOT / "fixtures" / "lint" / "TFP204" / "good_spawn_pool_cell_worker.ipynb"]


@pytest.fixture(scope="module")
def nbqa_run(tmp_path_factory):
    if shutil.which(tool("nbqa")) is None:
        pytest.skip("nbqa is not installed (pip install 'tfproc-lint[test]')")
    directory = tmp_path_factory.mktemp("nbqa")
    for path in NOTEBOOKS:
        shutil.copy(path, directory / path.name)
    completed = processes.run([tool("nbqa"), "flake8", *[p.name for p in NOTEBOOKS], "--select", "TFP"],
                              cwd=directory, env=run_env(), capture_output=True, text=True, check=False, timeout=300)
    return completed, directory


@pytest.mark.slow
def test_nbqa_flake8_reports_the_expected_findings_per_cell(nbqa_run) -> None:
    completed, directory = nbqa_run
    assert completed.returncode == 1, completed.stdout + completed.stderr
    found = set()
    for line in completed.stdout.splitlines():
        match = NBQA_LINE.match(line)
        if match:
            found.add((match["path"], int(match["cell"]), int(match["line"]), match["code"]))
    expected = set()
    for path in NOTEBOOKS:
        code_numbers = [number for number, _ in code_cells(path)]  # nbqa's cell_N: Nth code cell
        for cell, line, code in expected_in(path):
            expected.add((path.name, code_numbers.index(cell) + 1, line, code))
    assert found == expected
    assert {f[-1] for f in found} == {"TFP201", "TFP204"}
    assert not list(directory.glob("*_nbqa_ipynb.py"))  # nbqa cleaned up after itself
