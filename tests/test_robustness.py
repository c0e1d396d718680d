"""Robustness at scale: the installed TensorFlow + Keras sources, generated programs, `-j`.

No test here asserts on time (the machines are shared and noisy): benchmarks/lint_speed.py
measures speed. Bad input through the CLI is in test_cli_bad_input.py.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import libcst
import pytest
import processes
from conftest import ROOT, run_env, tool
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tfproc_lint import batch, engine
from tfproc_lint.analysis.file_analysis import FileAnalysis
from tfproc_lint.config import Config
from tfproc_lint.fixes.common import replace_nodes
from tfproc_lint.fixes.base import Refusal
from tfproc_lint.engine import DEFAULT_CONFIG, SourceError, lint_source
from tfproc_lint.parsing import parse
from tfproc_lint.rules.base import all_rules
from tfproc_lint.files import collect_files


def package_dir(name: str) -> str | None:
    """An installed package's directory, found without importing it (TensorFlow takes seconds)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return next(iter(spec.submodule_search_locations))


CORPUS = [d for d in (package_dir("tensorflow"), package_dir("keras")) if d]


def needs_corpus(test):
    """A test that lints the installed TensorFlow and Keras sources (marked `tensorflow`)."""
    skip = pytest.mark.skipif(not CORPUS, reason="TensorFlow/Keras not installed (the `probe` extra)")
    return pytest.mark.tensorflow(skip(test))


def check(*args: str, cwd: Path = ROOT, timeout: float = 300) -> subprocess.CompletedProcess:
    return processes.run([tool("tfproc-lint"), "check", *args], cwd=cwd, capture_output=True, text=True,
                         env=run_env(), check=False, timeout=timeout)


def assert_no_crash(result: subprocess.CompletedProcess) -> None:
    assert result.returncode in (0, 1), (result.returncode, result.stderr[-3000:])
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    for line in result.stderr.splitlines():  # one line per file that could not be checked
        assert line.startswith("tfproc-lint: ") and "internal error" not in line, line


# The real-world corpus --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def corpus_runs(tmp_path_factory) -> dict[str, subprocess.CompletedProcess]:
    cwd = tmp_path_factory.mktemp("corpus")  # no project configuration picked up
    return {
        "default": check("--format", "json", *CORPUS, cwd=cwd),
        "-j1": check("--format", "json", "-j1", *CORPUS, cwd=cwd),
    }


@needs_corpus
def test_whole_tensorflow_and_keras_corpus_without_internal_errors(corpus_runs) -> None:
    result = corpus_runs["default"]
    assert_no_crash(result)
    document = json.loads(result.stdout)
    assert not [e for e in document["errors"] if e["internal"]], document["errors"]
    files, _ = collect_files(CORPUS, Config())
    assert len(files) > 2000  # the whole corpus, not an empty directory
    summary = document["summary"]
    # every file either has results (possibly none) or a one-line reason
    assert summary["files_checked"] + summary["files_with_errors"] == len(files)
    assert len(result.stderr.splitlines()) == summary["files_with_errors"]


@needs_corpus
def test_jobs_give_identical_results_on_the_corpus(corpus_runs) -> None:
    default, one = corpus_runs["default"], corpus_runs["-j1"]
    assert_no_crash(one)
    assert json.loads(default.stdout) == json.loads(one.stdout)
    assert default.stderr == one.stderr


@needs_corpus
def test_fix_on_a_copy_of_the_whole_corpus(tmp_path) -> None:
    """--fix --unsafe-fixes on every file: rewritten files parse, a second run changes nothing,
    files without fixes are byte-identical."""
    import hashlib
    import shutil

    copies = []
    for directory in CORPUS:
        copy = tmp_path / Path(directory).name
        shutil.copytree(directory, copy, ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.so.*"))
        copies.append(str(copy))

    def digests() -> dict[Path, str]:
        return {p: hashlib.sha256(p.read_bytes()).hexdigest() for c in copies for p in Path(c).rglob("*.py")}

    before = digests()
    first = check("--fix", "--unsafe-fixes", "--format", "json", *copies, cwd=tmp_path, timeout=600)
    assert_no_crash(first)
    after = digests()
    changed = [path for path in before if before[path] != after[path]]
    assert set(after) == set(before), "the fixer created or removed files"
    assert changed, "the corpus has a fixable finding (keras saving_lib_test.py, TFP201)"
    assert json.loads(first.stdout)["summary"]["fixed"] >= len(changed)
    for path in changed:
        parse(path.read_text(encoding="utf-8"))
    second = check("--fix", "--unsafe-fixes", *copies, cwd=tmp_path, timeout=600)
    assert_no_crash(second)
    assert digests() == after, "a second --fix changed files"


@pytest.mark.slow
def test_jobs_give_identical_results_on_the_fixtures() -> None:
    fixtures = ROOT / "fixtures" / "lint"
    runs = {jobs: check(f"-j{jobs}", str(fixtures), timeout=300) for jobs in (1, 3)}
    runs[0] = check(str(fixtures), timeout=300)  # default: all cores
    for result in runs.values():
        assert_no_crash(result)
    assert runs[1].returncode == 1 and runs[1].stdout.count("TFP") > 40  # the bad fixtures were found
    for jobs in (0, 3):
        assert runs[jobs].stdout == runs[1].stdout, jobs
        assert runs[jobs].stderr == runs[1].stderr, jobs


@pytest.mark.slow
def test_a_worker_that_dies_costs_only_its_own_file(monkeypatch) -> None:
    """A native crash in a worker (LibCST's parser on pathological input, the OOM killer) must not
    break the run: batch.check_files reports that one file and checks the others."""
    files, _ = collect_files([str(ROOT / "fixtures" / "lint" / "TFP101")], Config())
    expected = batch.check_files(files, DEFAULT_CONFIG, jobs=1)
    victim = files[3].display
    real_lint = engine.lint_source

    def crashing_lint(text, display, config, **options):
        if display == victim:
            os._exit(11)  # as a segfault would: no exception, the process is gone
        return real_lint(text, display, config, **options)

    monkeypatch.setattr(engine, "lint_source", crashing_lint)  # inherited by the forked workers
    monkeypatch.setattr(batch, "PARALLEL_MIN_FILES", 0)  # use worker processes even for few files
    results = batch.check_files(files, DEFAULT_CONFIG, jobs=2)
    assert [r.path for r in results] == [r.path for r in expected]
    for got, want in zip(results, expected, strict=True):
        if got.path == victim:
            assert got.error is not None and got.error.internal and "died" in got.error.reason
            assert "\n" not in got.error.reason
        else:
            assert got.error == want.error and got.diagnostics == want.diagnostics, got.path


# Generated programs (hypothesmith) --------------------------------------------------------------------
def _hypothesmith():
    """hypothesmith, imported when a test first draws a program: its import and grammars cost seconds
    that every collection of the suite (`-k`, `-m` included) used to pay."""
    import hypothesmith

    return hypothesmith


# Generated code hardly ever mentions TensorFlow and a process API, so the text pre-filter would skip
# it: each program is also linted behind a header that passes the pre-filter, and analysed directly.
HEADER = (
    "import multiprocessing as mp\n"
    "import tensorflow as tf\n"
    "from concurrent.futures import ProcessPoolExecutor\n"
    "sess = tf.compat.v1.Session()\n"
    "model = tf.keras.Sequential()\n"
    "pool = mp.Pool(2)\n"
)
FOOTER = (
    "\n"
    "def work(x):\n"
    "    return x\n"
    "pool.map(work, [sess, model])\n"
    "mp.Process(target=work, args=(sess,)).start()\n"
)


def generated(examples: int) -> settings:
    return settings(max_examples=examples, deadline=None, database=None, suppress_health_check=[
        HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])


def lint_or_source_error(source: str) -> None:
    try:
        lint_source(source, "<generated>")
    except SourceError as error:
        assert str(error) and "\n" not in str(error)


def analyse_everything(source: str) -> None:
    """FileAnalysis and every rule, without the pre-filter; positions and fixes of every report."""
    try:
        module = parse(source)
    except SourceError:
        return
    analysis = FileAnalysis(module, "<generated>", DEFAULT_CONFIG)
    rules = [rule() for rule in all_rules()]  # the opt-in rules too
    reports = [report for crossing in analysis.crossings for rule in rules
               for report in rule.check_crossing(crossing, analysis)]
    reports += [report for rule in rules for report in rule.check_file(analysis)]
    analysis.owners, analysis.file_start_method  # noqa: B018 - computed for their own sake
    for report in reports:
        analysis.position(report.node)
        if report.fix is not None:
            plan = report.fix.plan(analysis)
            if not isinstance(plan, Refusal):
                assert replace_nodes(analysis.module, plan).code  # the rewrite must not crash either


def check_generated(source: str) -> None:
    for text in (source, HEADER + source, HEADER + source + FOOTER):
        lint_or_source_error(text)
    analyse_everything(source)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # hypothesmith compiles what it generates
@generated(150)
@given(st.deferred(lambda: _hypothesmith().from_grammar()))
def test_generated_programs_from_the_grammar(source: str) -> None:
    check_generated(source)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # hypothesmith compiles what it generates
@generated(40)
@given(st.deferred(lambda: _hypothesmith().from_node()))
def test_generated_programs_from_libcst_nodes(source: str) -> None:
    check_generated(source)


TEMPLATE = (
    "import multiprocessing as mp\n"
    "import tensorflow as tf\n"
    "from concurrent.futures import ProcessPoolExecutor\n"
    "from functools import partial\n"
    "\n"
    "def work(x):\n"
    "    return x\n"
    "\n"
    "class Runner:\n"
    "    def __init__(self):\n"
    "        self.sess = tf.compat.v1.Session()\n"
    "        self.value = ({0})\n"
    "\n"
    "    def run(self):\n"
    "        with mp.Pool(2, initializer=work, initargs=(({0}),)) as pool:\n"
    "            pool.map(({0}), [self.value, ({0})])\n"
    "        mp.Process(target=({0}), args=(({0}), self.sess)).start()\n"
    "        with ProcessPoolExecutor(2, mp_context=mp.get_context(({0}))) as executor:\n"
    "            executor.submit(partial(work, ({0})), self)\n"
    "\n"
    "model = tf.keras.Sequential()\n"
    "model.predict(({0}))\n"
    "Runner().run()\n"
)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # hypothesmith compiles what it generates
@generated(100)
@given(st.deferred(lambda: _hypothesmith().from_node(libcst.Expr, auto_target=False)))
def test_generated_expressions_at_process_boundaries(expression: str) -> None:
    """Arbitrary expressions as targets, pool callables, sent values, initargs and contexts."""
    source = TEMPLATE.format(expression)
    lint_or_source_error(source)
    analyse_everything(source)


# Complete statements every rule cares about; random orders, some inside a function or a main block.
SNIPPETS = [
    "sess = tf.compat.v1.Session()", "model = tf.keras.models.load_model('m.keras')", "pool = mp.Pool(2)",
    "ctx = mp.get_context('fork')", "pool = ctx.Pool(2, initializer=work)", "q = mp.Queue()", "q.put(sess)",
    "pool.map(work, [model])", "pool.apply_async(Worker().run)", "p = mp.Process(target=lambda: sess.run(1))",
    "p.start()", "mp.set_start_method('spawn')", "del sess", "model.predict([[1.0]])", "sess = None",
    "def work(x):\n    return sess.run(x)", "def build(x):\n    return tf.keras.models.load_model(x)",
    ("class Worker(mp.Process):\n    def __init__(self):\n        super().__init__()\n"
     "        self.model = tf.keras.Sequential()\n    def run(self):\n        self.model(1)"),
    "with mp.Pool() as pool:\n    pool.starmap(build, [(1,)])", "f = tf.function(work)", "pool.map(f, [1])",
    "executor = ProcessPoolExecutor(initializer=work, initargs=(model,))", "executor.submit(work, sess)",
    "r, w = mp.Pipe()\nw.send(model)", "import keras\nkeras.Model()",
    "global_model = None\ndef init():\n    global global_model\n    global_model = build('m')",
]


def _assemble(parts: list[str], wrap: str) -> str:
    body = "\n".join(parts) + "\n"
    if wrap == "function":
        return "def main():\n" + "".join("    " + line + "\n" for line in body.splitlines())
    if wrap == "main":
        return "if __name__ == '__main__':\n" + "".join("    " + line + "\n" for line in body.splitlines())
    return body


@generated(100)
@given(st.lists(st.sampled_from(SNIPPETS), max_size=20), st.sampled_from(["module", "function", "main"]))
def test_generated_mixes_of_rule_relevant_statements(parts: list[str], wrap: str) -> None:
    source = HEADER + "\n" + _assemble(parts, wrap) + "\n" + _assemble(parts[::-1], "module")
    lint_or_source_error(source)
    analyse_everything(source)


# The benchmark script ----------------------------------------------------------------------------------
@pytest.mark.slow
def test_benchmark_script_runs_in_quick_mode(tmp_path) -> None:
    output = tmp_path / "bench.json"
    result = processes.run(
        [sys.executable, str(ROOT / "benchmarks" / "lint_speed.py"), "--quick",
         "--paths", str(ROOT / "fixtures" / "lint" / "TFP101"), "--json", str(output)],
        cwd=tmp_path, capture_output=True, text=True, env=run_env(), timeout=300, check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    document = json.loads(output.read_text())
    names = {row["name"] for row in document["rows"]}
    assert {"tfproc-lint", "tfproc-lint -j1", "tfproc-lint warm", "ast.parse", "libcst parse", "lint_source",
            "large project", "large project --no-project"} <= names
    expected_files = len(list((ROOT / "fixtures" / "lint" / "TFP101").glob("*.py")))
    assert document["corpus"]["files"] == expected_files and not document["problems"]
    assert [t["status"] in ("PASS", "FAIL", "SKIP") for t in document["targets"]] == [True] * 8
    single = [row["name"] for row in document["single_file"]]
    assert single[:4] == ["one file", "python start", "import libcst", "imports"]
    assert "| what |" in result.stdout


def _large_project_module():
    spec = importlib.util.spec_from_file_location("large_project", ROOT / "benchmarks" / "large_project.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_the_benchmarks_large_project_is_fixed_and_gets_its_findings_through_calls(tmp_path) -> None:
    """benchmarks/large_project.py writes the same package on every run, several hundred modules,
    whose entry scripts reach the runtime, the settings and the workers only through calls into the
    package: the project layer finds TFP201 where the forking workers start and TFP402 at the late
    setting helpers; the near misses (spawn, the settings first) and the numpy workers stay silent.
    The one-file tools are found with and without the project layer."""
    large_project = _large_project_module()
    files = large_project.project_files()
    assert files == large_project.project_files()
    assert sum(name.endswith(".py") for name in files) >= 300
    root = large_project.write_large_project(tmp_path)
    findings = {}
    for extra in ([], ["--no-project"]):
        done = processes.run([sys.executable, "-m", "tfproc_lint.cli", "check", "--no-cache", "--format", "json",
                              *extra, str(root)], cwd=tmp_path, capture_output=True, text=True, env=run_env(),
                             timeout=300, check=False)
        assert done.returncode in (0, 1), done.stderr[-3000:]
        findings[bool(extra)] = {(Path(f["path"]).relative_to(root).as_posix(), f["code"])
                                 for f in json.loads(done.stdout)["findings"]}
    tools = {(f"tools/export_{number}.py", "TFP201") for number in range(4)}  # model and pool in one file
    assert findings[True] == tools  # each file alone: only the one-file tools
    scripts = {f"train_{number}.py" for number in range(6)}
    assert {(name, "TFP402") for name in scripts} | tools <= findings[False]
    forking = {name for name, code in findings[False] if code == "TFP201"} - {name for name, _ in tools}
    assert forking == {"atlas/workers/w00.py", "atlas/workers/w10.py"}  # the chains that end in TensorFlow
    assert not {name for name, _ in findings[False]} & {"train_spawn.py", "train_settings_first.py"}


@pytest.mark.slow
def test_worker_processes_give_the_same_results_as_one_process(monkeypatch) -> None:
    """The CLI runs small batches in-process (batch.PARALLEL_MIN_FILES); force the pool here."""
    files, _ = collect_files([str(ROOT / "fixtures" / "lint")], Config())
    expected = batch.check_files(files, DEFAULT_CONFIG, jobs=1, fix_edits=True)
    monkeypatch.setattr(batch, "PARALLEL_MIN_FILES", 0)
    progress = []
    results = batch.check_files(files, DEFAULT_CONFIG, jobs=3, progress=lambda: progress.append(1), fix_edits=True)
    assert results == expected
    assert sum(len(r.diagnostics) for r in results) > 50
    assert len(progress) == len(files)  # once per file, whichever kind of task finished it


def test_screening_chunks_hold_a_share_of_the_bytes_not_only_of_the_files(tmp_path) -> None:
    """Largest files first, every file once; a chunk holds at most 1/(8 jobs) of the files and, past
    its first file, about 1/(16 jobs) of the bytes. Chunks of 1/(8 jobs) of the files alone put half
    of TensorFlow + Keras's bytes in the first one, and the candidates among its files (the longest
    lint) waited for all of it on one worker."""
    sizes = [400_000, 300_000, 200_000, 100_000] + [5_000] * 60 + [100] * 200
    for number, size in enumerate(sizes):
        (tmp_path / f"m{number:03}.py").write_bytes(b"#" * size)
    files, _ = collect_files([str(tmp_path)], Config())
    jobs = 2
    chunks = batch._chunks(files, jobs)
    order = [index for chunk in chunks for index in chunk]
    assert sorted(order) == list(range(len(files)))
    held = [[files[i].path.stat().st_size for i in chunk] for chunk in chunks]
    assert [size for chunk in held for size in chunk] == sorted(sizes, reverse=True)
    budget = sum(sizes) / (jobs * 16)
    assert all(len(chunk) <= len(files) // (jobs * 8) and (len(chunk) == 1 or sum(chunk) <= budget)
               for chunk in held)
    assert held[:4] == [[400_000], [300_000], [200_000], [100_000]]
