"""The text pre-filter lets through every file a rule can match (it may let through more)."""

from __future__ import annotations

from pathlib import Path

import pytest

from expectations import expected, lint_fixtures
from tfproc_lint.analysis.prefilter import may_match, may_match_bytes
from tfproc_lint.rules.base import all_rules

ROOT = Path(__file__).resolve().parent.parent
BAD = [p for p in lint_fixtures(ROOT) if p.name.startswith("bad_")]
EXAMPLES = [example.code for rule in all_rules() for example in rule.bad_examples]


@pytest.mark.parametrize("path", BAD, ids=[p.name for p in BAD])
def test_every_bad_fixture_passes_the_prefilter(path: Path) -> None:
    data = path.read_bytes()
    assert expected(data.decode("utf-8"))
    assert may_match_bytes(data) and may_match(data.decode("utf-8"))


@pytest.mark.parametrize("code", EXAMPLES)
def test_every_bad_example_passes_the_prefilter(code: str) -> None:
    assert may_match_bytes(code.encode()) and may_match(code)


@pytest.mark.parametrize("source", [
    "import numpy as np\nprint(np.ones(3))\n",
    "import tensorflow as tf\nprint(tf.ones(3))\n",
    "import multiprocessing as mp\nmp.Pool(2).map(print, [1])\n",
])
def test_files_that_cannot_match_are_skipped(source: str) -> None:
    assert not may_match(source)


def test_every_runtime_setting_is_a_prefilter_marker() -> None:
    from tfproc_lint.analysis import api

    calls = [f"{name.replace('tensorflow.', 'tf.')}(x)" for name in api.RUNTIME_CONFIGURATION]
    aliases = [f"setter = {name.replace('tensorflow.', 'tf.')}" for name in api.RUNTIME_CONFIGURATION]
    settings = [f"os.environ[{name!r}] = '1'" for name in api.RUNTIME_ENVIRONMENT]
    settings += [f"os.putenv({name!r}, '1')" for name in api.RUNTIME_ENVIRONMENT]
    for line in [*calls, *aliases, *settings]:
        source = f"import os\nimport tensorflow as tf\n{line}\n"
        assert may_match(source) and may_match_bytes(source.encode()), line


def test_a_tensorflow_setting_alone_passes() -> None:
    source = "import os\nimport tensorflow as tf\nos.environ['TF_NUM_INTRAOP_THREADS'] = '1'\n"
    assert may_match(source) and may_match_bytes(source.encode())
    assert not may_match("import os\nos.environ['CUDA_VISIBLE_DEVICES'] = '0'\n")
