"""The text pre-filter lets through every file a rule can match (it may let through more)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from expectations import expected, fixture_config, lint_fixtures
from tfproc_lint import engine
from tfproc_lint.analysis.prefilter import may_match, may_match_bytes, may_match_tree
from tfproc_lint.rules.base import all_rules

ROOT = Path(__file__).resolve().parent.parent
BAD = [p for p in lint_fixtures(ROOT) if p.name.startswith("bad_")]
EXAMPLES = [example.code for rule in all_rules() for example in rule.bad_examples]
# Every Python file we have that a rule may match: lint fixtures (bad, good, near-misses), the
# probe's scenarios, the bundled examples.
PYTHON = sorted([*(p for p in lint_fixtures(ROOT) if p.suffix == ".py"),
                 *(ROOT / "runtime_probe" / "scenarios").rglob("*.py"), *(ROOT / "examples").rglob("*.py")])


@pytest.mark.parametrize("path", BAD, ids=[p.name for p in BAD])
def test_every_bad_fixture_passes_the_prefilter(path: Path) -> None:
    data = path.read_bytes()
    assert expected(data.decode("utf-8"))
    assert may_match_bytes(data) and may_match(data.decode("utf-8"))


@pytest.mark.parametrize("code", EXAMPLES)
def test_every_bad_example_passes_the_prefilter(code: str) -> None:
    assert may_match_bytes(code.encode()) and may_match(code) and may_match_tree(code, ast.parse(code))


@pytest.mark.parametrize("path", BAD, ids=[p.name for p in BAD])
def test_every_bad_fixture_passes_the_syntax_tree_stage(path: Path) -> None:
    if path.suffix == ".ipynb":
        pytest.skip("a notebook's program is checked in test_findings_do_not_depend_on_the_syntax_tree_stage")
    source = path.read_text(encoding="utf-8")
    assert may_match_tree(source, ast.parse(source))


def test_findings_do_not_depend_on_the_syntax_tree_stage(monkeypatch) -> None:
    """The second stage only skips work: every file gives the same findings without it."""
    sources = [(path, path.read_text(encoding="utf-8")) for path in PYTHON]
    sources = [(path, source) for path, source in sources if may_match(source)]
    assert len(sources) > 100

    def findings():
        return [(str(path), [(d.line, d.code, d.message) for d in engine.lint_source(
            source, str(path), fixture_config(source, str(path)))]) for path, source in sources]

    staged = findings()
    monkeypatch.setattr(engine, "may_match_tree", lambda source, tree: True)
    assert findings() == staged
    assert sum(1 for _, found in staged if found) > 50


@pytest.mark.parametrize("source", [
    "import numpy as np\nprint(np.ones(3))\n",
    "import tensorflow as tf\nprint(tf.ones(3))\n",
    "import multiprocessing as mp\nmp.Pool(2).map(print, [1])\n",
    # Keras data workers start only with the literal True, which the analysis requires too
    "import keras\ndef fit(model, data, use_multiprocessing=False):\n"
    "    return model.fit(data, workers=4, use_multiprocessing=use_multiprocessing)\n",
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
        assert may_match_tree(source, ast.parse(source)), line


@pytest.mark.parametrize("source", [
    "from tensorflow.config.experimental import set_memory_growth as grow\ngrow(gpu, True)\n",
    "import tensorflow.compat.v1 as v1\nsetter = v1.config.set_visible_devices\nsetter([], 'GPU')\n",
    "import tensorflow as tf\nconfig = tf.config\nthreads = config.threading\n"
    "threads.set_intra_op_parallelism_threads(2)\n",
    "from os import environ as env\nimport tensorflow as tf\nenv['CUDA_VISIBLE_DEVICES'] = '0'\n",
    "import os, tensorflow as tf\nos.environ.update(TF_FORCE_GPU_ALLOW_GROWTH='true')\n",
    "import os, tensorflow as tf\nKEY = 'TF_GPU_ALLOCATOR'\nos.putenv(KEY, 'cuda_malloc_async')\n",
])
def test_settings_the_analysis_resolves_pass_the_syntax_tree_stage(source: str) -> None:
    assert may_match(source) and may_match_tree(source, ast.parse(source))


@pytest.mark.parametrize("source", [
    # TensorFlow's own sources configure it through internal modules, which no rule reports.
    "from tensorflow.python.framework import config\nconfig.set_logical_device_configuration(d, [])\n",
    "import tensorflow as tf\nclass Context:\n    def set_memory_growth(self, dev, on):\n        pass\n",
    "import os\nimport tensorflow as tf\n# docs: CUDA_VISIBLE_DEVICES picks the GPUs; see os.environ\n",
    "import tensorflow as tf\nenviron = {}\nenviron['CUDA_VISIBLE_DEVICES'] = '0'\n",
])
def test_settings_that_cannot_resolve_stop_at_the_syntax_tree_stage(source: str) -> None:
    assert may_match(source)
    assert not may_match_tree(source, ast.parse(source))


def test_a_tensorflow_setting_alone_passes() -> None:
    source = "import os\nimport tensorflow as tf\nos.environ['TF_NUM_INTRAOP_THREADS'] = '1'\n"
    assert may_match(source) and may_match_bytes(source.encode())
    assert not may_match("import os\nos.environ['CUDA_VISIBLE_DEVICES'] = '0'\n")


def _process_makers() -> list[str]:
    from tfproc_lint.analysis import api
    from tfproc_lint.analysis.kinds import Kind
    from tfproc_lint.analysis.names import canonical

    makers = {name for name, kind in api.PROCESS_CONSTRUCTORS.items() if kind is not Kind.THREADS}
    return sorted(makers | {alias for alias in api.PROCESS_ALIASES if canonical(alias) in makers})


@pytest.mark.parametrize("name", _process_makers())
def test_every_process_maker_the_analysis_knows_passes(name: str) -> None:
    """`m.ForkProcess(...)`, `pmp.Pool(...)`: each pool, process, executor (and alias) the knowledge
    classifies, called through a module alias, is a candidate."""
    module, _, attribute = name.rpartition(".")
    source = f"import tensorflow as tf\nimport {module} as m\n\nm.{attribute}(2)\n"
    assert may_match(source) and may_match_bytes(source.encode())
