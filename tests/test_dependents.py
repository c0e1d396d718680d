"""`tfproc-lint check --with-dependents` and the search behind it (tfproc_lint/dependents.py): the
project's files that import the given ones, directly or through other modules. The pre-commit hook
through the real pre-commit: tests/test_precommit.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import processes
from conftest import tool
from tfproc_lint.config import COMMAND_LINE, Configs
from tfproc_lint.analysis.importers import Reading, find_importers
from tfproc_lint.dependents import find_dependents
from tfproc_lint.files import collect_files
from tfproc_lint.project_layout import layout_for
from tfproc_lint.rules import rule_codes

REGISTRY = 'from shop import models\n\nMODEL_PATH = "ranker.keras"\n\n\ndef describe():\n    return MODEL_PATH\n'
LOADING = REGISTRY + "\n\nMODEL = models.load(MODEL_PATH)\n"  # the same module, loading the model at import
NIGHTLY = '''\
import multiprocessing as mp

import tensorflow as tf

from shop import registry


def total(rows):
    return float(tf.reduce_sum(tf.constant(rows)))


if __name__ == "__main__":
    print(registry.describe())
    with mp.Pool(4) as pool:
        print(pool.map(total, [[1.0], [2.0]]))
'''


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")


@pytest.fixture
def shop(tmp_path, monkeypatch) -> Path:
    write(tmp_path, {
        "pyproject.toml": '[project]\nname = "shop"\nrequires-python = ">=3.10"\n',
        "shop/__init__.py": "",
        "shop/models.py": "import tensorflow as tf\n\n\ndef load(path):\n    return tf.keras.models.load_model(path)\n",
        "shop/registry.py": REGISTRY,
        "shop/service.py": "from . import registry\n\nNAME = registry.describe()\n",  # relative
        "shop/labels.py": "LABELS = ['cheap', 'dear']\n",  # imported by no one
        "scripts/nightly.py": NIGHTLY,
        "scripts/report.py": "import shop.service as service\n\nprint(service.NAME)\n",  # through shop.service
        "scripts/other.py": "import os\n\nprint(os.getcwd())\n",
        "build/generated.py": "from shop import registry\n",  # excluded by default
        "notebooks/explore.ipynb": json.dumps({
            "cells": [{"cell_type": "code", "source": ["from shop import models\n"]}],
            "metadata": {}, "nbformat": 4, "nbformat_minor": 5}),
    })
    monkeypatch.chdir(tmp_path)
    return tmp_path


def dependents(*names: str) -> list[str]:
    configs = Configs(None, {}, COMMAND_LINE, rule_codes())
    files, errors = collect_files(list(names), configs)
    assert not errors
    return [source_file.display for source_file in find_dependents(files, configs)]


def test_the_files_that_import_a_module_directly_or_through_others(shop) -> None:
    assert dependents("shop/registry.py") == ["scripts/nightly.py", "scripts/report.py", "shop/service.py"]
    assert dependents("shop/service.py") == ["scripts/report.py"]
    assert dependents("shop/models.py") == ["notebooks/explore.ipynb", "scripts/nightly.py", "scripts/report.py",
                                            "shop/registry.py", "shop/service.py"]


def test_a_package_is_run_by_every_import_of_its_modules(shop) -> None:
    assert dependents("shop/__init__.py") == ["notebooks/explore.ipynb", "scripts/nightly.py", "scripts/report.py",
                                              "shop/registry.py", "shop/service.py"]


def test_no_dependents_for_a_module_no_one_imports_a_script_or_a_notebook(shop) -> None:
    assert dependents("shop/labels.py") == []
    assert dependents("scripts/nightly.py") == []
    assert dependents("notebooks/explore.ipynb") == []


def test_given_files_are_not_their_own_dependents_and_cycles_end(shop) -> None:
    assert dependents("shop/registry.py", "shop/service.py") == ["scripts/nightly.py", "scripts/report.py"]
    assert dependents("shop/models.py", "notebooks/explore.ipynb") == [  # a notebook is given, not a dependent
        "scripts/nightly.py", "scripts/report.py", "shop/registry.py", "shop/service.py"]
    write(shop, {"shop/models.py": "from shop import service\n"})  # models -> service -> registry -> models
    assert dependents("shop/registry.py") == ["notebooks/explore.ipynb", "scripts/nightly.py", "scripts/report.py",
                                              "shop/models.py", "shop/service.py"]


def test_a_script_outside_the_source_folders_is_imported_by_its_neighbours(shop) -> None:
    write(shop, {"pyproject.toml": '[project]\nname = "shop"\n\n[tool.tfproc-lint]\nsrc = ["shop"]\n',
                 "tools/helpers.py": "X = 1\n", "tools/run.py": "import helpers\n"})
    assert dependents("tools/helpers.py") == ["tools/run.py"]  # run as `python tools/run.py`


def test_a_file_in_no_project_has_no_dependents(tmp_path, monkeypatch) -> None:
    write(tmp_path, {"loose/a.py": "import b\n", "loose/b.py": "X = 1\n"})
    monkeypatch.chdir(tmp_path / "loose")
    assert dependents("b.py") == []


def importers(shop: Path, target: str, reading: Reading, transitive: bool = False) -> dict[str, int]:
    """The shared search (analysis/importers.py) over the shop's Python files, as {file: line}."""
    layout = layout_for(shop / target)
    files = sorted(path for path in shop.rglob("*.py") if path.parts[len(shop.parts)] != "build")
    found = find_importers([shop / target], files, lambda path: path.read_text(encoding="utf-8"),
                           lambda path: layout, reading, transitive)
    return {path.relative_to(shop).as_posix(): line for path, line in found.items()}


def test_the_shared_search_reads_statements_exactly_or_lines_of_text(shop) -> None:
    """EXACT (TFP202's message names the line) reads every statement, a parenthesised one over
    several lines too, and nothing in a string; TEXT (--with-dependents, cheaper) reads the lines
    that start with an import: one in a docstring counts, a parenthesised one does not."""
    write(shop, {"scripts/late.py": "import os\n\nfrom shop import (\n    registry,\n)\n",
                 "scripts/noted.py": '"""Use it so:\n\nfrom shop import registry\n"""\n'})
    exact = importers(shop, "shop/registry.py", Reading.EXACT)
    assert exact == {"scripts/late.py": 3, "scripts/nightly.py": 5, "shop/service.py": 1}
    text = importers(shop, "shop/registry.py", Reading.TEXT)
    assert text == {"scripts/noted.py": 0, "scripts/nightly.py": 0, "shop/service.py": 0}  # lines not told
    assert importers(shop, "shop/service.py", Reading.EXACT, transitive=True) == {"scripts/report.py": 1}


def test_a_relative_import_that_never_names_its_package_is_found(shop) -> None:
    """`from . import registry` in shop/service.py runs shop/__init__.py, though its text never
    says "shop": the search reads files with a relative import when a package is searched for."""
    assert "shop/service.py" in importers(shop, "shop/__init__.py", Reading.EXACT)


def check(*args: str) -> tuple[int, str, str]:
    """The command, in a process of its own as a user (or pre-commit) runs it: the project layer
    keeps what it read of each module for the life of its process."""
    done = processes.run([tool("tfproc-lint"), "check", "--no-cache", *args], capture_output=True, text=True,
                         timeout=120, check=False)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.slow
def test_check_reports_a_dependents_findings(shop) -> None:
    assert check("shop/registry.py")[0] == 0
    assert check("--with-dependents", "shop/registry.py")[0] == 0  # the module does not load yet
    (shop / "shop" / "registry.py").write_text(LOADING, encoding="utf-8")
    assert check("shop/registry.py")[0] == 0  # alone, the module has no finding
    code, out, err = check("--with-dependents", "shop/registry.py")
    assert code == 1
    assert [line.split(" ")[:2] for line in out.splitlines()[:-1]] == [["scripts/nightly.py:14:10:", "TFP201"]]
    assert "imports shop.registry, whose import calls models.load() (shop/registry.py:10)" in out
    assert "which loads a Keras model (shop/models.py:5)" in out
    assert "findings in 1 file that import the given files (--with-dependents): scripts/nightly.py" in err
    assert check("--with-dependents", "shop/labels.py")[0] == 0  # the near miss


def test_with_fix_the_dependents_are_reported_never_edited(shop) -> None:
    (shop / "shop" / "registry.py").write_text(LOADING, encoding="utf-8")
    code, out, _ = check("--fix", "--unsafe-fixes", "--with-dependents", "shop/registry.py")
    assert code == 1 and "scripts/nightly.py:14:10: TFP201" in out
    assert (shop / "scripts" / "nightly.py").read_text(encoding="utf-8") == NIGHTLY
    assert check("--fix", "--unsafe-fixes", "scripts/nightly.py")[0] == 0  # the fix was there to apply
    assert "get_context" in (shop / "scripts" / "nightly.py").read_text(encoding="utf-8")


def test_a_dependent_that_cannot_be_checked_is_left_out(shop) -> None:
    broken = ("import multiprocessing as mp\nimport tensorflow as tf\n\nfrom shop import registry\n\n"
              "with mp.Pool(2) as pool:\n    pool.map(tf.abs, [1]\n")  # a syntax error
    write(shop, {"scripts/broken.py": broken})
    assert check("scripts/broken.py")[0] == 1
    code, out, err = check("--with-dependents", "shop/registry.py")
    assert code == 0 and "broken" not in out + err


def test_with_dependents_and_add_noqa_is_a_usage_error(shop) -> None:
    code, _, err = check("--with-dependents", "--add-noqa", "shop/registry.py")
    assert code == 2 and "--with-dependents" in err
