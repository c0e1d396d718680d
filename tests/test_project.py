"""The project layer: modules found by name, summaries of what they offer, findings that need a
second module, the off switch, the pre-filter, related places in other files, and a cache that
never serves a result after a module it used has changed."""

from __future__ import annotations

import json
import re
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

import processes
from conftest import ROOT, run_env
from expectations import expected
from tfproc_lint import cache as cache_module, cli
from tfproc_lint.analysis.prefilter import may_match, may_need_project
from tfproc_lint.analysis.project_names import ModuleSummary, SettingKind
from tfproc_lint.config import Config
from tfproc_lint.project import Project, project_for
from tfproc_lint.project_layout import clear_caches, find_root, imported_names, layout_for

PROJECTS = sorted(p for p in (ROOT / "fixtures" / "projects").iterdir() if p.is_dir())


def _findings(directory: Path, *options: str, capsys, monkeypatch) -> set[tuple[str, int, str]]:
    monkeypatch.chdir(directory)
    clear_caches()
    cli.main(["check", ".", "--no-cache", "--format", "json", "-j", "1", *options])
    return {(Path(d["path"]).as_posix(), d["line"], d["code"])
            for d in json.loads(capsys.readouterr().out)["findings"]}


EXPECT_LOCAL = re.compile(r"#\s*expect-local:\s*(TFP\d{3})")


def _expected(directory: Path, local: bool = False) -> set[tuple[str, int, str]]:
    """`# expect: CODE` with project analysis; `# expect-local: CODE`: only file by file (a false
    alarm that another module clears)."""
    found = set()
    for path in directory.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        where = path.relative_to(directory).as_posix()
        if local:
            found |= {(where, number, match.group(1)) for number, line in enumerate(text.splitlines(), start=1)
                      for match in EXPECT_LOCAL.finditer(line)}
        else:
            found |= {(where, line, code) for line, code in expected(text)}
    return found


@pytest.mark.parametrize("directory", PROJECTS, ids=[p.name for p in PROJECTS])
def test_project_fixture(directory: Path, capsys, monkeypatch) -> None:
    """Each multi-module fixture gets exactly its `# expect:` findings; checked file by file
    (`--no-project`) it gets none of them (every one needs a second module), and only its
    `# expect-local:` ones (false alarms that another module clears)."""
    assert _findings(directory, capsys=capsys, monkeypatch=monkeypatch) == _expected(directory)
    assert _findings(directory, "--no-project", capsys=capsys, monkeypatch=monkeypatch) == _expected(directory, True)


def test_fixture_projects_cover_bad_and_near_miss() -> None:
    with_findings = [p for p in PROJECTS if _expected(p)]
    cleared = [p for p in PROJECTS if _expected(p, local=True)]
    assert len(with_findings) >= 5 and len(PROJECTS) - len(with_findings) >= 3 and cleared


def test_config_off_switch(tmp_path: Path, capsys, monkeypatch) -> None:
    project = tmp_path / "p"
    shutil.copytree(ROOT / "fixtures" / "projects" / "fork_after_imported_build", project)
    (project / "pyproject.toml").write_text("[tool.tfproc-lint]\nproject-analysis = false\n", encoding="utf-8")
    assert _findings(project, capsys=capsys, monkeypatch=monkeypatch) == set()


# layout -------------------------------------------------------------------------------------------
def test_layout_names_modules_and_finds_their_files(tmp_path: Path) -> None:
    (tmp_path / "setup.py").write_text("", encoding="utf-8")
    package = tmp_path / "src" / "shop" / "models"
    package.mkdir(parents=True)
    (tmp_path / "src" / "shop" / "__init__.py").write_text("", encoding="utf-8")
    (package / "cnn.py").write_text("", encoding="utf-8")  # models/ has no __init__: a namespace package
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "run.py").write_text("", encoding="utf-8")
    (tmp_path / "tools" / "helpers.py").write_text("", encoding="utf-8")
    clear_caches()
    layout = layout_for(package / "cnn.py")
    assert layout.root == tmp_path
    assert layout.module_name(package / "cnn.py") == "shop.models.cnn"
    assert layout.module_name(tmp_path / "src" / "shop" / "__init__.py") == "shop"
    assert layout.package_of(package / "cnn.py") == "shop.models"
    assert layout.module_path("shop.models.cnn") == package / "cnn.py"
    assert layout.module_path("numpy") is None
    # A script outside any package finds its neighbours, as `python tools/run.py` does.
    assert layout.module_path("helpers", tmp_path / "tools" / "run.py") == tmp_path / "tools" / "helpers.py"
    # `src` as configured (Ruff's option) replaces the default folders.
    assert layout_for(package / "cnn.py", ("lib",)).module_path("shop.models.cnn") is None


def test_imported_names_resolve_relative_imports() -> None:
    text = "from . import models\nfrom ..core.io import (read, write as w)\nimport a.b as c, d\n"
    assert imported_names(text, "pkg.sub") == ["pkg.sub", "pkg.sub.models", "pkg.core.io", "pkg.core.io.read",
                                               "pkg.core.io.write", "a.b", "d"]


def test_summary_survives_serialisation(monkeypatch) -> None:
    monkeypatch.chdir(ROOT / "fixtures" / "projects" / "import_builds_model")
    clear_caches()
    project = project_for("batch_embed.py", Config())
    summary = project.summary("serving.registry")
    assert summary.on_import is not None and summary.on_import.reason == "builds a Keras model"
    assert summary.state == {"DEFAULT_MODEL": ("keras_model", 4)}
    assert ModuleSummary.from_dict(json.loads(json.dumps(summary.to_dict()))) == summary
    package = project.summary("serving")
    assert package.exports["DEFAULT_MODEL"] == "serving.registry.DEFAULT_MODEL"
    assert project.names_for("batch_embed.py").state("serving.DEFAULT_MODEL") is not None  # through __init__


def test_facts_compose_through_constructors_factories_and_process_subclasses(monkeypatch) -> None:
    """Issue 36: a constructor's start two modules away, a dataclass's `__post_init__`, a factory's
    class, a method reached through `self.attr`, another module's Process subclass; all survive
    serialisation."""
    monkeypatch.chdir(ROOT / "fixtures" / "projects" / "object_starts_runtime")
    clear_caches()
    names = project_for("serve.py", Config()).names_for("serve.py")
    service = names.function("planner.service.RankingService")
    assert service.starts.place.path == "planner/loading.py" and service.starts.reason == "loads a Keras model"
    evaluation = names.function("planner.service.Evaluation")  # the dataclass's __post_init__
    assert evaluation.name == "Evaluation.__init__" and evaluation.starts.place.line == 8
    assert names.function("planner.loading.make_scorer").instance_of == "planner.loading.Scorer"
    assert names.function("planner.service.Ranker").starts is None  # the scorer loads only when warmed
    assert names.function("planner.service.Ranker.warm").starts.place.path == "planner/loading.py"
    assert names.function("planner.core.LazyPlanner").starts is None
    monkeypatch.chdir(ROOT / "fixtures" / "projects" / "worker_runs_tf_elsewhere")
    clear_caches()
    names = project_for("embed_process.py", Config()).names_for("embed_process.py")
    embedding, profile = names.function("vision.procs.EmbeddingWorker"), names.function("vision.procs.ProfileWorker")
    assert embedding.process_base == profile.process_base == "multiprocessing.Process"
    assert names.function("vision.procs.EmbeddingWorker.run").runs_tf
    assert not names.function("vision.procs.ProfileWorker.run").runs_tf
    assert names.function("vision.tasks.embed_item").runs_tf and not names.function("vision.tasks.profile_item").runs_tf
    summary = names.summary("vision.procs")
    facts = {name: summary.functions[name] for name in summary.functions}
    assert ModuleSummary.from_dict(json.loads(json.dumps(summary.to_dict(facts)))).functions == facts


def test_import_cycles_end(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / ".git").mkdir()
    for name, other in (("a", "b"), ("b", "a")):
        (tmp_path / f"{name}.py").write_text(f"import tensorflow as tf\nimport {other}\n\n"
                                             f"def f():\n    return {other}.f()\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    clear_caches()
    project = project_for("a.py", Config())
    assert project.summary("a") is not None and project.summary("b") is not None


def test_settings_made_through_calls(monkeypatch) -> None:
    """A function's facts list the settings it makes, through project calls (prepare -> limit_threads),
    not reads, not a setting whose RuntimeError is handled; they survive serialisation."""
    monkeypatch.chdir(ROOT / "fixtures" / "projects" / "helper_limits_threads_late")
    clear_caches()
    project = project_for("train.py", Config())
    names = project.names_for("train.py")
    made = [(s.kind, s.name.rsplit(".", 1)[1], str(s.place)) for s in names.function("pkg.setup.prepare").settings]
    assert made == [(SettingKind.CONFIGURATION, "set_intra_op_parallelism_threads", "pkg/perf.py:5"),
                    (SettingKind.CONFIGURATION, "set_inter_op_parallelism_threads", "pkg/perf.py:6")]
    assert names.function("pkg.perf.thread_counts").settings == ()
    assert names.function("pkg.perf.try_limit_threads").settings == ()
    for module in ("pkg.perf", "pkg.setup"):
        summary = project.summary(module)
        assert ModuleSummary.from_dict(json.loads(json.dumps(summary.to_dict()))) == summary


def test_settings_through_a_call_cycle_end(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / ".git").mkdir()
    for name, other in (("a", "b"), ("b", "a")):
        (tmp_path / f"{name}.py").write_text(
            f"import os\nimport {other}\n\n\ndef f():\n    os.environ['TF_NUM_INTRAOP_THREADS'] = '1'\n"
            f"    return {other}.f()\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    clear_caches()
    facts = project_for("a.py", Config()).names_for("a.py").function("a.f")
    assert {str(s.place) for s in facts.settings} == {"a.py:6", "b.py:6"}


# pre-filter ---------------------------------------------------------------------------------------
def test_prefilter_lets_through_a_file_that_runs_tensorflow_through_its_project(monkeypatch) -> None:
    directory = ROOT / "fixtures" / "projects" / "fork_after_imported_build"
    monkeypatch.chdir(directory)
    clear_caches()
    source = (directory / "evaluate.py").read_text(encoding="utf-8")
    assert "tensorflow" not in source and not may_match(source)
    assert may_need_project(source, "evaluate.py", Config())
    assert not may_need_project(source, "evaluate.py", Config(project_analysis=False))
    numpy_only = ROOT / "fixtures" / "projects" / "imported_worker_numpy" / "etl" / "clean.py"
    assert not may_need_project("import multiprocessing\nfrom etl.clean import clip_rows\nmultiprocessing.Pool(2)\n",
                                str(numpy_only.parent.parent / "x.py"), Config())


def test_prefilter_lets_through_a_file_that_starts_a_process_class_of_its_project(monkeypatch) -> None:
    """No process module named: the file starts an object and imports a module defining a `Process` subclass."""
    directory = ROOT / "fixtures" / "projects" / "method_forks_after_constructor"
    monkeypatch.chdir(directory)
    clear_caches()
    source = (directory / "desk" / "coach.py").read_text(encoding="utf-8")
    assert not may_match(source) and may_need_project(source, "desk/coach.py", Config())
    assert not may_need_project(source.replace("learner.start()", "learner.run()"), "desk/coach.py", Config())
    assert not may_need_project("from desk.network import QNetwork\nQNetwork().start()\n", "desk/coach.py", Config())


def test_prefilter_lets_through_a_file_that_calls_a_helper_making_a_setting(tmp_path: Path, monkeypatch) -> None:
    """No TensorFlow, no processes: the file passes when a project module it imports (or one that
    module imports) names a runtime setting, and only then; a changed helper is read again."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "helpers.py").write_text("from gpus import pin\n", encoding="utf-8")
    (tmp_path / "gpus.py").write_text("import os\n\ndef pin(i):\n    os.environ['CUDA_VISIBLE_DEVICES'] = str(i)\n",
                                      encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    clear_caches()
    entry = tmp_path / "train.py"
    entry.write_text("", encoding="utf-8")  # the verdict is about a file of the project
    entry = str(entry)
    assert may_need_project("from helpers import pin\npin(0)\n", entry, Config())
    assert not may_need_project("import os\nprint(os.getcwd())\n", entry, Config())
    (tmp_path / "gpus.py").write_text("def pin(i):\n    return i\n", encoding="utf-8")
    assert not may_need_project("from helpers import pin\npin(0)\n", entry, Config())


# output -------------------------------------------------------------------------------------------
def test_related_place_in_the_other_module(capsys, monkeypatch) -> None:
    monkeypatch.chdir(ROOT / "fixtures" / "projects" / "late_env_after_imported_query")
    clear_caches()
    cli.main(["check", "train.py", "--no-cache", "--format", "json"])
    [finding] = json.loads(capsys.readouterr().out)["findings"]
    assert "trainer/devices.py:5" in finding["message"]
    assert {"path": "trainer/devices.py", "line": 5} in [
        {"path": r["path"], "line": r["line"]} for r in finding["related"]]
    assert {"path": "trainer/devices.py", "line": 5, "column": 39, "end_column": 71} in [
        {key: r[key] for key in ("path", "line", "column", "end_column")} for r in finding["related"]]
    cli.main(["check", "train.py", "--no-cache", "--format", "full", "--color", "never"])
    full = capsys.readouterr().out.splitlines()
    # The caret marks the call in the other module, not its line's first column.
    header = full.index("  ::: trainer/devices.py:5:39")
    source, marker = full[header + 3], full[header + 4]
    assert source.endswith("return [device.name for device in tf.config.list_logical_devices()]")
    call = source.index("tf.config.list_logical_devices()")
    assert marker.index("^") == call and marker[call:].startswith("^" * len("tf.config.list_logical_devices()") + " ")
    cli.main(["check", "train.py", "--no-cache", "--format", "sarif"])
    [result] = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    assert any(r["physicalLocation"]["artifactLocation"]["uri"].endswith("trainer/devices.py")
               for r in result["relatedLocations"])


def test_import_chain_names_the_import_time_call_to_change(capsys, monkeypatch) -> None:
    """sweep.py imports zoo.registry, whose `DEFAULTS = {"mlp": small_mlp()}` builds a model in
    zoo.networks: the finding names that call (the one to change), in its message and as a related
    place before the start itself; the summary keeps it through serialisation."""
    directory = ROOT / "fixtures" / "projects" / "registry_builds_through_helper"
    monkeypatch.chdir(directory)
    clear_caches()
    cli.main(["check", "sweep.py", "--no-cache", "--format", "json"])
    [finding] = json.loads(capsys.readouterr().out)["findings"]
    assert ("imports zoo.registry, whose import calls small_mlp() (zoo/registry.py:4), which builds a Keras model "
            "(zoo/networks.py:5)") in finding["message"]
    assert "or move the call at zoo/registry.py:4 into a function that runs after the fork" in finding["message"]
    related = [(r["path"], r["line"], r["column"], r["end_column"]) for r in finding["related"]]
    assert related[1:] == [("zoo/registry.py", 4, 20, 31), ("zoo/networks.py", 5, 12, 111)]
    summary = project_for("sweep.py", Config()).summary("zoo.registry")
    assert str(summary.on_import.trigger.place) == "zoo/registry.py:4"
    assert ModuleSummary.from_dict(json.loads(json.dumps(summary.to_dict()))) == summary


def test_workers_started_at_import_of_a_module_that_others_import(capsys, monkeypatch) -> None:
    """TFP202 in a library module that run_embed.py imports: a `__main__` block never runs there, so
    the message says what works (a function the entry point calls, a client made on first use) and
    the main-guard fix, which would hide the finding by never starting the workers, is refused.
    warm_cache.py, the same start in a script nobody imports, keeps the guard and its fix."""
    monkeypatch.chdir(ROOT / "fixtures" / "projects" / "library_starts_workers_at_import")

    def check(*options: str) -> dict:
        clear_caches()
        cli.main(["check", ".", "--no-cache", "--format", "json", "--unsafe-fixes", "-j", "1", *options])
        return {Path(f["path"]).as_posix(): f for f in json.loads(capsys.readouterr().out)["findings"]}

    found = check()
    pool, dask, script = found["embedder/pool_job.py"], found["embedder/dask_job.py"], found["warm_cache.py"]
    assert "(it is imported by run_embed.py:2)" in pool["message"]
    assert "start the workers in a function that the entry point calls (or make the pool on first use)" in (
        pool["message"])
    assert "make the client lazily, in a function that creates it on first use" in dask["message"]
    start = found["embedder/start_method.py"]
    assert "runs at import of this module (imported by run_embed.py:5)" in start["message"]
    assert "call it once in the entry point's `if __name__" in start["message"]
    for finding in (pool, dask, start):
        assert finding["fix"] is None and "under `if __name__" not in finding["message"].split("(manual edit")[0]
        assert 'manual edit required: code under `if __name__ == "__main__":` never runs in a module that is ' \
               "imported (run_embed.py:" in finding["message"]
    assert "move the code from here on under `if __name__" in script["message"] and script["fix"] is not None
    # File by file nothing says the module is imported: the script's message and fix.
    assert check("--no-project")["embedder/pool_job.py"]["fix"] is not None


def test_no_context_fix_when_an_imported_module_sets_the_start_method_at_import(capsys, monkeypatch) -> None:
    """TFP203 after a library's import-time `set_start_method`: `get_context("spawn")` in this file would not
    help, since every spawned child imports the library again and raises there (the probe's
    tfp203_pkg_library_sets_start_method_bad, auto-fixed so, lost every worker): manual edit, naming the
    library's line."""
    monkeypatch.chdir(ROOT / "fixtures" / "projects" / "library_fixes_start_method")
    clear_caches()
    cli.main(["check", "train.py", "--no-cache", "--format", "json", "--unsafe-fixes"])
    [finding] = json.loads(capsys.readouterr().out)["findings"]
    assert finding["code"] == "TFP203" and finding["fix"] is None
    assert "manual edit required: augment/__init__.py:4 sets the start method when it is imported" in finding["message"]
    assert "remove the call from that module" in finding["message"]


def test_fork_reached_through_calls_names_the_start_in_the_calling_module(capsys, monkeypatch) -> None:
    """run_nightly.py lists the devices (the runtime starts), then calls nightly.scoring.score_all(),
    whose pool forks, and the `score` method of a ShardScorer it made before: each finding is at the
    pool, naming the start and the call in the entry point (in its message and as related places),
    with the library's spawn-context fix."""
    monkeypatch.chdir(ROOT / "fixtures" / "projects" / "fork_reached_through_calls")
    clear_caches()
    cli.main(["check", "nightly/scoring.py", "--no-cache", "--format", "json", "--unsafe-fixes"])
    function, method = json.loads(capsys.readouterr().out)["findings"]
    assert function["code"] == "TFP201" and function["line"] == 13
    assert ("pool forked after the parent started TensorFlow's runtime in another module (run_nightly.py:17: "
            "lists devices (tf.config.list_logical_devices())), which then calls score_all() (run_nightly.py:19)"
            ) in function["message"]
    assert "or call score_all() before the runtime starts" in function["message"]
    related = [(r["path"], r["line"], r["column"]) for r in function["related"]]
    assert related == [("run_nightly.py", 17, 23), ("run_nightly.py", 19, 11)]
    assert function["fix"] is not None
    # A method called on an object made before the start, called after it.
    assert method["line"] == 24 and "which then calls ShardScorer.score() (run_nightly.py:19)" in method["message"]


def test_fork_reached_through_calls_follows_edits_of_the_calling_module(tmp_path: Path, capsys, monkeypatch) -> None:
    """The library's result depends on the entry point that calls it: moving the call before the
    start there clears the library's finding, from the cache too."""
    project = tmp_path / "p"
    shutil.copytree(ROOT / "fixtures" / "projects" / "fork_reached_through_calls", project)
    monkeypatch.chdir(project)
    entry = project / "run_nightly.py"

    def run() -> list[str]:
        clear_caches()
        cli.main(["check", "nightly/scoring.py", "--format", "json", "-j", "1"])
        return [d["code"] for d in json.loads(capsys.readouterr().out)["findings"]]

    assert run() == ["TFP201", "TFP201"]
    assert run() == ["TFP201", "TFP201"]  # from the cache
    original = entry.read_text(encoding="utf-8")
    start = '    print("devices:", tf.config.list_logical_devices())\n    warm_up()\n'
    scores = "    print(score_all(range(4)), scorer.score(range(4)))\n"
    entry.write_text(original.replace(start, "").replace(scores, scores + start), encoding="utf-8")
    assert run() == []  # both calls now come before the start
    entry.write_text(original, encoding="utf-8")
    assert run() == ["TFP201", "TFP201"]


def test_fork_reached_through_a_chain_of_calls_and_an_import_cycle(tmp_path: Path, capsys, monkeypatch) -> None:
    """The start two modules away counts (run_nightly.py -> nightly.pipeline.finish() ->
    nightly.archive.archive_all()), named with the call in the module between; modules that import
    each other end the search (each module's callers asked once on a chain)."""
    monkeypatch.chdir(ROOT / "fixtures" / "projects" / "fork_reached_through_calls")
    clear_caches()
    cli.main(["check", "nightly/archive.py", "--no-cache", "--format", "json"])
    [finding] = json.loads(capsys.readouterr().out)["findings"]
    assert ("in another module (run_nightly.py:17: lists devices (tf.config.list_logical_devices())), which then "
            "calls archive_all() (nightly/pipeline.py:6)") in finding["message"]
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "a.py").write_text(textwrap.dedent("""\
        import tensorflow as tf
        import b

        def go():
            tf.config.list_logical_devices()
            b.run()
        """), encoding="utf-8")
    (tmp_path / "b.py").write_text(textwrap.dedent("""\
        import multiprocessing as mp
        import tensorflow as tf
        import a

        def norm(seed):
            return float(tf.norm(tf.random.normal((512, 512), seed=seed)))

        def run():
            with mp.Pool(2) as pool:
                return pool.map(norm, range(4))

        def again():
            a.go()
        """), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    clear_caches()
    cli.main(["check", ".", "--no-cache", "--format", "json", "-j", "1"])
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert [(Path(f["path"]).as_posix(), f["line"], f["code"]) for f in findings] == [("b.py", 9, "TFP201")]


# cache --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("racy", [2.0, -3600.0], ids=["fresh", "settled"])
def test_cache_is_never_stale_when_a_used_module_changes(tmp_path: Path, racy: float, capsys, monkeypatch) -> None:
    monkeypatch.setattr(cache_module, "RACY_SECONDS", racy)
    project = tmp_path / "p"
    shutil.copytree(ROOT / "fixtures" / "projects" / "fork_after_imported_build", project)
    monkeypatch.chdir(project)
    model = project / "imgclf" / "model.py"

    def run() -> list[str]:
        clear_caches()
        cli.main(["check", ".", "--format", "json", "-j", "1"])
        return [d["code"] for d in json.loads(capsys.readouterr().out)["findings"]]

    assert run() == ["TFP201"]
    assert run() == ["TFP201"]  # from the cache
    original = model.read_text(encoding="utf-8")
    model.write_text(original.replace("return tf.keras.Model(", "return dict(").replace(
        "inputs = tf.keras.Input((32, 32, 3))", "inputs = None").replace(
        "x = tf.keras.layers", "x = dict  # tf.keras.layers").replace("(inputs)", ""), encoding="utf-8")
    assert run() == []  # the helper no longer starts the runtime: the importing file's result changed
    model.write_text(original, encoding="utf-8")
    assert run() == ["TFP201"]


def test_summaries_persist_and_go_stale_with_the_files_they_read(tmp_path: Path, monkeypatch) -> None:
    """A summary stored by one run serves the next without analysing its module again; function
    facts not stored are worked out when asked; an edit to a module it read makes it stale."""
    shutil.copytree(ROOT / "fixtures" / "projects" / "worker_loads_per_task", tmp_path / "p")
    monkeypatch.chdir(tmp_path / "p")
    clear_caches()
    store = cache_module.SummaryStore(tmp_path / "summaries")

    def facts(name: str):
        project = Project(layout_for("score_all.py", Config().src), Config())
        project.store = store
        with project.lint_scope():
            return project.names_for("score_all.py").function(name)

    first = facts("scoring.tasks.score_file")
    assert first.builds is not None and first.builds.place.line == 10
    assert len(list(store.directory.glob("*.json"))) == 3  # scoring, scoring.tasks and the scoring.models it imports
    with monkeypatch.context() as patched:
        patched.setattr(Project, "_summarize", lambda *args: pytest.fail("analysed again"))
        assert facts("scoring.tasks.score_file") == first
    assert facts("scoring.tasks.score_with").builds is None  # not stored: worked out now
    models = Path("scoring/models.py")
    models.write_text(models.read_text(encoding="utf-8").replace("tf.keras.models.load_model(MODEL_PATH)",
                                                                 "MODEL_PATH"), encoding="utf-8")
    assert facts("scoring.tasks.score_file").builds is None  # the helper no longer loads a model


def test_flake8_plugin_reads_the_project(tmp_path: Path) -> None:
    directory = tmp_path / "imported_worker"  # a copy: the plugin keeps summaries in the current folder's cache
    shutil.copytree(ROOT / "fixtures" / "projects" / "imported_worker", directory)
    result = processes.run([sys.executable, "-m", "flake8", "--select", "TFP", "run_jobs.py"], cwd=directory,
                           capture_output=True, text=True, env=run_env(), timeout=120)
    assert "TFP201" in result.stdout and "jobs/tasks.py" not in result.stderr, result.stdout + result.stderr


@pytest.mark.slow
def test_flake8_plugin_keeps_summaries_in_the_cache_folder(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "fixtures" / "projects" / "worker_loads_per_task", tmp_path / "p")
    command = [sys.executable, "-m", "flake8", "--select", "TFP", "-j", "1", "score_all.py"]
    first = processes.run(command, cwd=tmp_path / "p", capture_output=True, text=True, env=run_env(), timeout=120)
    stored = list((tmp_path / "p" / ".tfproc_lint_cache").glob("*/summaries/*.json"))
    assert "TFP301" in first.stdout and stored, first.stdout + first.stderr
    # run from the folder above: the cache folder is the current folder's, not one per sub-project
    above = processes.run([sys.executable, "-m", "flake8", "--select", "TFP", "-j", "1", "p/score_all.py"],
                          cwd=tmp_path, capture_output=True, text=True, env=run_env(), timeout=120)
    assert "TFP301" in above.stdout and list(tmp_path.glob(".tfproc_lint_cache/*/summaries/*.json"))
    again = processes.run(command, cwd=tmp_path / "p", capture_output=True, text=True, env=run_env(), timeout=120)
    assert again.stdout == first.stdout


def test_module_level_start_method_of_an_imported_library_holds(tmp_path: Path, capsys, monkeypatch) -> None:
    """A library that sets fork at import: the entry point's pools fork (no assumption needed)."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "lib.py").write_text('import multiprocessing\nmultiprocessing.set_start_method("fork")\n',
                                     encoding="utf-8")
    (tmp_path / "main.py").write_text(textwrap.dedent("""\
        import multiprocessing as mp
        import tensorflow as tf
        import lib

        def work(x):
            return float(tf.reduce_sum(tf.ones((2, 2)))) + x

        if __name__ == "__main__":
            print(float(tf.reduce_sum(tf.ones((2, 2)))))
            with mp.Pool(2) as pool:
                print(pool.map(work, range(4)))
        """), encoding="utf-8")
    found = _findings(tmp_path, "--target-python", "3.14", capsys=capsys, monkeypatch=monkeypatch)
    assert found == {("main.py", 10, "TFP201")}
    local = _findings(tmp_path, "--target-python", "3.14", "--no-project", capsys=capsys, monkeypatch=monkeypatch)
    assert local == set()  # file-local: forkserver, the 3.14 default


def test_a_tree_without_a_project_marker_is_checked_file_by_file(tmp_path: Path) -> None:
    """No pyproject.toml, setup.cfg, setup.py or .git up the tree (an installed or vendored copy of
    packages): no project, each file alone."""
    package = tmp_path / "vendored" / "lib"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    clear_caches()
    if find_root(tmp_path) is not None:
        pytest.skip(f"{find_root(tmp_path)} above the temporary folder holds a project marker")
    assert layout_for(package / "__init__.py") is None


def test_python_dash_m_runs_the_command_line() -> None:
    directory = ROOT / "fixtures" / "projects" / "late_env_after_imported_query"
    result = processes.run([sys.executable, "-m", "tfproc_lint", "check", "train.py", "--no-cache"], cwd=directory,
                           capture_output=True, text=True, env=run_env(), timeout=120)
    assert result.returncode == 1 and "TFP403" in result.stdout, result.stdout + result.stderr
