"""The text pre-filter lets through every file a rule can match (it may let through more)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from expectations import expected, fixture_config, lint_fixtures
from tfproc_lint import engine, flake8_plugin
from tfproc_lint.analysis import prefilter
from tfproc_lint.analysis.prefilter import may_match, may_match_bytes, may_match_tree
from tfproc_lint.knowledge import packages
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


@pytest.mark.slow
def test_findings_do_not_depend_on_the_syntax_tree_stage(monkeypatch) -> None:
    """The second stage only skips work: every file gives the same findings without it, through
    the engine and through batch.py (which screens before importing the engine)."""
    from tfproc_lint import batch
    from tfproc_lint.files import SourceFile

    sources = [(path, path.read_text(encoding="utf-8")) for path in PYTHON]
    sources = [(path, source) for path, source in sources if may_match(source)]
    assert len(sources) > 100

    def findings():
        return [(str(path), [(d.line, d.code, d.message) for d in engine.lint_source(
            source, str(path), fixture_config(source, str(path)))]) for path, source in sources]

    def batch_findings():
        results = [batch._check_file(SourceFile(path, str(path)), fixture_config(source, str(path)), False, None)
                   for path, source in sources]
        return [(r.path, [(d.line, d.code, d.message) for d in r.diagnostics], r.error) for r in results]

    def plugin_findings(with_tree: bool = True):
        """The flake8 plugin runs the stage on flake8's tree before importing the engine."""
        from tfproc_lint.flake8_plugin import TFProcPlugin

        return [(str(path), list(TFProcPlugin(ast.parse(source) if with_tree else None,
                                              source.splitlines(keepends=True), str(path)).run()))
                for path, source in sources]

    staged, staged_batch, staged_plugin = findings(), batch_findings(), plugin_findings()
    stopped = [path for path, source in sources if not may_match_tree(source, ast.parse(source))]
    assert plugin_findings(with_tree=False) == staged_plugin  # the engine runs the stage itself
    monkeypatch.setattr(engine, "may_match_tree", lambda source, tree: True)
    monkeypatch.setattr(batch, "may_match_tree", lambda source, tree: True)
    monkeypatch.setattr(flake8_plugin, "may_match_tree", lambda source, tree: True)
    assert findings() == staged
    assert batch_findings() == staged_batch
    assert plugin_findings() == staged_plugin
    assert sum(1 for _, found in staged_plugin if found) > 50
    # batch.py lists what `check` lists: the fix loop may withdraw a fix (its reason is
    # `manual_edit`, not part of the message)
    assert [(path, found) for path, found, _ in staged_batch] == staged
    assert sum(1 for _, found in staged if found) > 50
    assert stopped  # the stage is exercised: some files stop there


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
    from tfproc_lint.knowledge import environment, tensorflow

    calls = [f"{name.replace('tensorflow.', 'tf.')}(x)" for name in tensorflow.RUNTIME_CONFIGURATION]
    aliases = [f"setter = {name.replace('tensorflow.', 'tf.')}" for name in tensorflow.RUNTIME_CONFIGURATION]
    settings = [f"os.environ[{name!r}] = '1'" for name in environment.RUNTIME_ENVIRONMENT]
    settings += [f"os.putenv({name!r}, '1')" for name in environment.RUNTIME_ENVIRONMENT]
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
    # scopes: a function's own import, a `global` import made elsewhere, a class body, a comprehension
    "import keras\ndef f():\n    import tensorflow as tf\n    tf.config.set_visible_devices([], 'GPU')\n",
    "import keras\ntf = None\ndef f():\n    global tf\n    import tensorflow as tf\n"
    "def g():\n    tf.config.set_visible_devices([], 'GPU')\n",
    "import keras\nclass A:\n    import tensorflow as tf\n    tf.config.set_visible_devices([], 'GPU')\n",
    "import tensorflow as tf\n[tf.config.experimental.set_memory_growth(g, True) for g in gpus]\n",
    "import tensorflow as tf\ndef f(x=tf.config.set_visible_devices([], 'GPU')):\n    import numpy as tf\n",
    # environment writes through an alias, and each setter method
    "import os as o, tensorflow\nenv = o.environ\ndef f():\n    env['CUDA_VISIBLE_DEVICES'] = '0'\n",
    "import os, tensorflow as tf\nos.environ.setdefault('TF_NUM_INTRAOP_THREADS', '1')\n",
    "import os, tensorflow as tf\nos.environ.__setitem__('TF_NUM_INTRAOP_THREADS', '1')\n",
])
def test_settings_the_analysis_resolves_pass_the_syntax_tree_stage(source: str) -> None:
    assert may_match(source) and may_match_tree(source, ast.parse(source))


@pytest.mark.parametrize("source", [
    # TensorFlow's own sources configure it through internal modules, which no rule reports.
    "from tensorflow.python.framework import config\nconfig.set_logical_device_configuration(d, [])\n",
    "import tensorflow as tf\nclass Context:\n    def set_memory_growth(self, dev, on):\n        pass\n",
    "import os\nimport tensorflow as tf\n# docs: CUDA_VISIBLE_DEVICES picks the GPUs; see os.environ\n",
    "import tensorflow as tf\nenviron = {}\nenviron['CUDA_VISIBLE_DEVICES'] = '0'\n",
    # a function's own binding hides the module's (keras/src/ops/nn_test.py: 4,000 lines parsed for this)
    "import tensorflow as tf\ndef test():\n    from keras.src.utils.module_utils import tensorflow as tf\n"
    "    tf.config.set_logical_device_configuration(d, [])\n",
    "import tensorflow as tf\ndef test(tf):\n    tf.config.set_logical_device_configuration(d, [])\n",
    # a method does not see its class body's names
    "import keras\nclass A:\n    import tensorflow as tf\n    def m(self):\n"
    "        tf.config.set_visible_devices([])\n",
    # reading the environment sets nothing
    "import os, tensorflow as tf\nprint(os.environ['CUDA_VISIBLE_DEVICES'], os.environ.get('TF_GPU_ALLOCATOR'))\n",
])
def test_settings_that_cannot_resolve_stop_at_the_syntax_tree_stage(source: str) -> None:
    assert may_match(source)
    assert not may_match_tree(source, ast.parse(source))


def test_a_tensorflow_setting_alone_passes() -> None:
    source = "import os\nimport tensorflow as tf\nos.environ['TF_NUM_INTRAOP_THREADS'] = '1'\n"
    assert may_match(source) and may_match_bytes(source.encode())
    assert not may_match("import os\nos.environ['CUDA_VISIBLE_DEVICES'] = '0'\n")


@pytest.mark.parametrize("package", packages.TENSORFLOW_PACKAGES)
def test_every_tensorflow_package_the_knowledge_names_passes(package: str) -> None:
    """A package added to knowledge/packages.py reaches the analysis: the text stage finds it."""
    source = f"import {package} as tf\nimport multiprocessing as mp\n\nmp.Pool(2)\n"
    assert may_match(source) and may_match_bytes(source.encode())


@pytest.mark.parametrize("package", packages.PROCESS_PACKAGES)
def test_every_process_package_the_knowledge_names_passes(package: str) -> None:
    source = f"import tensorflow as tf\nimport {package} as mp\n\nmp.Pool(2)\n"
    assert may_match(source) and may_match_bytes(source.encode())


def _process_makers() -> list[str]:
    from tfproc_lint.analysis.names import canonical
    from tfproc_lint.knowledge import processes
    from tfproc_lint.knowledge.kinds import Kind

    makers = {name for name, kind in processes.PROCESS_CONSTRUCTORS.items() if kind is not Kind.THREADS}
    return sorted(makers | {alias for alias in processes.PROCESS_ALIASES if canonical(alias) in makers})


@pytest.mark.parametrize("name", _process_makers())
def test_every_process_maker_the_analysis_knows_passes(name: str) -> None:
    """`m.ForkProcess(...)`, `pmp.Pool(...)`: each pool, process, executor (and alias) the knowledge
    classifies, called through a module alias, is a candidate."""
    module, _, attribute = name.rpartition(".")
    source = f"import tensorflow as tf\nimport {module} as m\n\nm.{attribute}(2)\n"
    assert may_match(source) and may_match_bytes(source.encode())


# The text stage's patterns before they lost their leading `\b` and `^\s*` (slow: `re` tried every
# position).
_REFERENCE_SETTING = re.compile(
    rf"\b(?:{'|'.join(sorted(prefilter._SETTERS))})\b"
    r"|(?:CUDA_VISIBLE_DEVICES|TF_FORCE_GPU_ALLOW_GROWTH|TF_GPU_ALLOCATOR|TF_NUM_INT)[\s\S]*?(?:environ|putenv)"
    r"|(?:environ|putenv)[\s\S]*?(?:CUDA_VISIBLE_DEVICES|TF_FORCE_GPU_ALLOW_GROWTH|TF_GPU_ALLOCATOR|TF_NUM_INT)"
)
_REFERENCE_PROCESS_MODULE = re.compile(
    r"\b(?:multiprocess(?:ing)?|concurrent\.futures|billiard|joblib|loky|pathos)\b|from\s+concurrent\s+import"
    r"|\bfork\s*\(|\buse_multiprocessing\s*=\s*True\b"
)
_REFERENCE_MAKER = re.compile(
    r"\b_?(?:Pool|(?:Fork|Spawn|ForkServer)?Process|ProcessPoolExecutor|Queue|SimpleQueue|JoinableQueue|Pipe|Manager"
    r"|SyncManager|get_context"
    r"|Parallel|ProcessingPool|ProcessPool|get_reusable_executor|fork)(?:\s*[(),]|\s+as\b)"
    r"|\buse_multiprocessing\s*=\s*True\b"
)
_REFERENCE_ENGINE_IMPORT = re.compile(rf"^\s*(?:import|from)\s+(?:{'|'.join(prefilter._ENGINES)})\b", re.MULTILINE)


def _reference_decisions(source: str) -> tuple[bool, bool, bool]:
    tensorflow = any(marker in source for marker in prefilter._GROUPS[1])
    makes = (all(any(marker in source for marker in group) for group in (prefilter._GROUPS[0], prefilter._GROUPS[2]))
             and _REFERENCE_PROCESS_MODULE.search(source) is not None and _REFERENCE_MAKER.search(source) is not None)
    setting = any(marker in source for marker in prefilter._SETTINGS) and _REFERENCE_SETTING.search(source) is not None
    engines = _REFERENCE_ENGINE_IMPORT.search(source) is not None
    return tensorflow and (setting or makes or engines), makes, engines


def _installed_sources() -> list[Path]:
    import importlib.util

    roots = []
    for name in ("tensorflow", "keras"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            roots.append(Path(next(iter(spec.submodule_search_locations))))
    return [path for root in roots for path in root.rglob("*.py")]


@pytest.mark.tensorflow
def test_the_text_stage_decides_as_the_word_boundary_patterns_did() -> None:
    """On every file of the installed TensorFlow and Keras that reaches the text stage (and ours)."""
    installed = _installed_sources()
    if not installed:
        pytest.skip("TensorFlow and Keras are not installed (the probe extra)")
    texts = [path.read_text(encoding="utf-8", errors="replace") for path in installed
             if may_match_bytes(path.read_bytes())]
    names = [str(path) for path in installed if may_match_bytes(path.read_bytes())] + [str(path) for path in PYTHON]
    texts += [path.read_text(encoding="utf-8") for path in PYTHON]
    assert len(texts) > 400
    decided = [(may_match(text), prefilter._makes_processes(text), prefilter._imports_engine(text)) for text in texts]
    differing = [(name, got, _reference_decisions(text)) for name, text, got in zip(names, texts, decided)
                 if got != _reference_decisions(text)]
    assert not differing, differing[:5]  # a short message: pytest's diff of two long lists takes minutes
    assert sum(match for match, _, _ in decided) > 100
    assert sum(engine for _, _, engine in decided) > 10  # the engine pattern is exercised


@pytest.mark.parametrize("text, expected", [
    ("_Pool(2)", True), ("x_Pool(2)", False), ("__Pool(2)", False), ("._Pool(", True), ("Pool_Pool(", False),
    ("_fork()", True), ("a._Pool (", True), ("_Poolx(", False),
])
def test_a_match_may_start_with_an_underscore(text: str, expected: bool) -> None:
    pattern = re.compile(r"_?(?:Pool|fork)\s*\(")
    assert prefilter._at_word_start(pattern, text, ("Pool", "fork")) is expected
    assert (re.search(r"\b_?(?:Pool|fork)\s*\(", text) is not None) is expected


@pytest.mark.parametrize("text, expected", [
    ("mp.Pool(2)", True), ("xPool(2)", False), ("_Pool(2)", False), ("éPool(2)", False), ("Pool(2)", True),
    ("x.fork()", True), ("os_fork()", False), ("PoolPool(", False), ("(Pool (", True), ("١Pool(", False),
])
def test_a_match_must_start_a_word(text: str, expected: bool) -> None:
    pattern = re.compile(r"(?:Pool|fork)\s*\(")
    assert prefilter._at_word_start(pattern, text, ("Pool", "fork")) is expected
    assert (re.search(r"\b(?:Pool|fork)\s*\(", text) is not None) is expected


@pytest.mark.parametrize("text", [
    "import ray", "  import ray\n", "x = 1\n\t from dask import delayed", "x = 1; import ray", "# import ray",
    "import  \n ray", "\n\n\u2003import ray", "ximport ray", "\r import ray", "a\nb import ray\nimport dask",
])
def test_an_engine_import_must_start_a_line(text: str) -> None:
    reference = re.compile(r"^\s*(?:import|from)\s+(?:ray|dask)\b", re.MULTILINE)
    pattern = re.compile(r"(?:import|from)\s+(?:ray|dask)\b")
    assert prefilter._starts_a_line(pattern, text, ("import", "from")) is (reference.search(text) is not None)


@pytest.mark.parametrize("text", [
    "import tensorflow\nimport ray\n", "import tensorflow\n  from  dask import delayed",
    "import tensorflow\nx = 1; import ray",
    "import tensorflow\n# import ray", "import tensorflow\r import ray", "import tensorflow\x1c import ray",
    "import tensorflow\n\u3000import ray", "import keras\nimport\x0bray.util", "import keras\nimport rayon",
    "import keras  # array\n", "import keras\nimport distributed",
])
def test_the_byte_stage_lets_through_every_engine_import(text: str) -> None:
    """For an ASCII file the byte stage decides as the text stage; otherwise it lets the file through."""
    for encoding in ("utf-8", "utf-8-sig"):
        if not text.isascii() and encoding == "utf-8":
            continue
        data = text.encode(encoding)
        assert may_match_bytes(data) is (may_match(text) or not data.isascii() or "\x1c" in text)
    assert may_match_bytes(text.encode(), notebook=True) is ("ray" in text or "dask" in text or "distributed" in text)


@pytest.mark.slow
def test_the_byte_stage_lets_through_what_the_text_stage_does() -> None:
    """On every file of the installed TensorFlow and Keras and ours (fixtures, scenarios,
    examples, notebooks as their JSON)."""
    paths = _installed_sources() + PYTHON + [p for p in lint_fixtures(ROOT) if p.suffix == ".ipynb"]
    engines = 0
    for path in paths:
        data = path.read_bytes()
        if path.suffix == ".ipynb":
            from tfproc_lint.notebook import read_notebook

            text = read_notebook(data).program.text
        else:
            text = data.decode("utf-8", errors="replace")
        if may_match(text) or prefilter._imports_engine(text):
            engines += prefilter._imports_engine(text)
            assert may_match_bytes(data, notebook=path.suffix == ".ipynb"), path
    assert engines > 10


def test_a_named_file_that_cannot_match_does_not_load_the_analysis(tmp_path) -> None:
    """A file given on the command line is pre-filtered before LibCST is imported."""
    import processes
    import sys

    from conftest import run_env

    (tmp_path / "plain.py").write_text("import os\nprint(os.getcwd())\n", encoding="utf-8")
    (tmp_path / "bad.py").write_bytes(b"print('\xff')\n")
    command = ("import sys; from tfproc_lint.cli import main; code = main(['check', '--no-cache', {}]); "
               "print(code, 'libcst' in sys.modules)")
    plain = processes.run([sys.executable, "-c", command.format("'plain.py'")], cwd=tmp_path, capture_output=True,
                          text=True, env=run_env(), check=True)
    assert plain.stdout.splitlines()[-1] == "0 False"
    bad = processes.run([sys.executable, "-c", command.format("'bad.py'")], cwd=tmp_path, capture_output=True,
                        text=True, env=run_env(), check=True)
    assert bad.stdout.splitlines()[-1] == "1 False" and "bad.py: cannot decode" in bad.stderr


_MAKER_NAMES = ("Pool", "Process", "ForkProcess", "SpawnProcess", "ForkServerProcess", "ProcessPoolExecutor", "Queue",
                "SimpleQueue", "JoinableQueue", "Pipe", "Manager", "SyncManager", "get_context", "Parallel",
                "ProcessingPool", "ProcessPool", "get_reusable_executor", "fork")


@pytest.mark.parametrize("name", _MAKER_NAMES)
@pytest.mark.parametrize("template", ["x = mp.{}(2)", "x = _{}(2)", "from m import {} as p", "y{}(", "{}_x("])
def test_every_maker_is_found_by_its_keywords(name: str, template: str) -> None:
    text = template.format(name)
    expected = _REFERENCE_MAKER.search(text) is not None
    assert prefilter._at_word_start(prefilter._MAKER, text, prefilter._MAKER_KEYWORDS) is expected


@pytest.mark.parametrize("text", ["import multiprocessing", "import multiprocess", "concurrent.futures.x",
                                  "import billiard", "joblib.Parallel", "loky.get", "pathos.pools", "os.fork ()",
                                  "use_multiprocessing = True", "xjoblib", "use_multiprocessing=True_", "_fork()"])
def test_every_process_module_is_found_by_its_keywords(text: str) -> None:
    reference = re.compile(r"\b(?:multiprocess(?:ing)?|concurrent\.futures|billiard|joblib|loky|pathos)\b"
                           r"|\bfork\s*\(|\buse_multiprocessing\s*=\s*True\b")
    found = prefilter._at_word_start(prefilter._PROCESS_MODULE_WORD, text, prefilter._PROCESS_MODULE_KEYWORDS)
    assert found is (reference.search(text) is not None)
