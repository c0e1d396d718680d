"""The result cache never returns a stale result: a changed file, configuration, CPU count or
linter version is checked again; a broken cache is a miss or one warning, never a crash."""

from __future__ import annotations

import dataclasses
import json
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

import processes
from conftest import ROOT, run_env
from tfproc_lint import batch, cache as cache_module, cli, engine
from tfproc_lint.cache import DEFAULT_CACHE_DIR, open_cache, settings_key
from tfproc_lint.config import Config

FORKED = textwrap.dedent("""\
    import multiprocessing as mp
    import tensorflow as tf

    def work(x):
        return float(tf.reduce_sum(tf.ones((2, 2)))) + x

    if __name__ == "__main__":
        print(float(tf.reduce_sum(tf.ones((2, 2)))))
        with mp.Pool(2) as pool:
            print(pool.map(work, range(4)))
""")


@pytest.fixture(params=["fresh", "settled"])
def project(request, tmp_path, monkeypatch) -> Path:
    """A project with one file that has a finding and one without TensorFlow. "settled": the file
    index remembers files however recently they changed (normally only those older than
    RACY_SECONDS), so every test here also runs with the index answering for unchanged files."""
    if request.param == "settled":
        monkeypatch.setattr(cache_module, "RACY_SECONDS", -3600.0)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n", encoding="utf-8")
    (tmp_path / "job.py").write_text(FORKED, encoding="utf-8")
    (tmp_path / "plain.py").write_text("print('no TensorFlow here')\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def analysed(monkeypatch) -> list[str]:
    """The paths batch.py hands to the engine (a cache hit never reaches it)."""
    seen: list[str] = []
    real = batch._lint_text

    def counting(task):
        seen.append(task.display)
        return real(task)

    monkeypatch.setattr(batch, "_lint_text", counting)
    return seen


@pytest.fixture
def read(monkeypatch) -> list[str]:
    """The paths batch.py reads (the file index answers for the others without reading them)."""
    seen: list[str] = []
    real = batch._prepare_noted

    def counting(source_file, *args, **kwargs):
        seen.append(source_file.display)
        return real(source_file, *args, **kwargs)

    monkeypatch.setattr(batch, "_prepare_noted", counting)
    return seen


def check(capsys, *args: str) -> tuple[int, str]:
    code = cli.main(["check", "-j1", *args])
    return code, capsys.readouterr().out


def test_a_second_run_reads_the_cache_and_prints_the_same(project, analysed, capsys) -> None:
    first = check(capsys, ".")
    assert first[0] == 1 and "TFP201" in first[1] and analysed == ["./job.py"]
    assert check(capsys, ".") == first and analysed == ["./job.py"]  # not analysed again
    folder = project / DEFAULT_CACHE_DIR
    assert (folder / ".gitignore").read_text(encoding="utf-8").splitlines()[-1] == "*"
    tag = (folder / "CACHEDIR.TAG").read_text(encoding="utf-8")
    assert tag.startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert len(list(folder.glob("*/*.json"))) == 1  # only the file that reached the analysis
    git = processes.run(["git", "init", "-q", str(project)], capture_output=True, check=False)
    if git.returncode == 0:  # the folder ignores itself
        status = processes.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=project,
                               capture_output=True, text=True, check=True).stdout
        assert DEFAULT_CACHE_DIR not in status and "job.py" in status


def test_a_changed_file_is_checked_again(project, analysed, capsys) -> None:
    assert "TFP201" in check(capsys, ".")[1]
    (project / "job.py").write_text(FORKED.replace("with mp.Pool(2)", "with mp.get_context('spawn').Pool(2)"),
                                    encoding="utf-8")
    code, out = check(capsys, ".")
    assert code == 0 and "TFP201" not in out and analysed == ["./job.py", "./job.py"]
    (project / "job.py").write_text(FORKED, encoding="utf-8")  # back to the first content: its entry is right
    assert "TFP201" in check(capsys, ".")[1] and len(analysed) == 2


@pytest.mark.parametrize("change, gone", [
    ("[tool.tfproc-lint]\nignore = ['TFP201']\n", "TFP201"),
    ("[tool.tfproc-lint]\nassume-start-method = 'spawn'\n", "TFP201"),
    ("[tool.tfproc-lint.per-file-ignores]\n'job.py' = ['TFP201']\n", "TFP201"),
])
def test_a_changed_configuration_is_checked_again(project, analysed, capsys, change, gone) -> None:
    assert gone in check(capsys, ".")[1]
    with open(project / "pyproject.toml", "a", encoding="utf-8") as stream:
        stream.write(change)
    assert gone not in check(capsys, ".")[1] and len(analysed) == 2


def test_where_the_target_python_came_from_is_part_of_the_key(project, analysed, capsys) -> None:
    """Messages quote where the target Python came from: a new source is a new result."""
    (project / "pyproject.toml").write_text("[project]\nname = 'x'\nrequires-python = '>=3.10'\n", encoding="utf-8")
    assert "target Python 3.10 from requires-python in pyproject.toml" in check(capsys, ".")[1]
    (project / "pyproject.toml").write_text("[project]\nname = 'x'\n[tool.tfproc-lint]\ntarget-python = '3.10'\n",
                                            encoding="utf-8")
    out = check(capsys, ".")[1]
    assert "target Python 3.10 from target-python in [tool.tfproc-lint] in pyproject.toml" in out
    assert len(analysed) == 2
    assert "from --target-python" in check(capsys, ".", "--target-python", "3.10")[1] and len(analysed) == 3


def test_a_new_linter_version_or_cpu_count_is_checked_again(project, analysed, capsys, monkeypatch) -> None:
    check(capsys, ".")
    monkeypatch.setattr(cache_module, "__version__", "999.0")
    assert "TFP201" in check(capsys, ".")[1] and len(analysed) == 2
    monkeypatch.setattr(cache_module.os, "cpu_count", lambda: 4096)
    assert "TFP201" in check(capsys, ".")[1] and len(analysed) == 3


def test_an_edited_module_of_the_linter_is_a_new_fingerprint(tmp_path, monkeypatch) -> None:
    package = tmp_path / "tfproc_lint"
    shutil.copytree(Path(cache_module.__file__).parent, package, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(cache_module, "__file__", str(package / "cache.py"))
    before = cache_module.linter_fingerprint()
    rule = package / "rules" / "tfp201_runtime_initialised_before_fork.py"
    rule.write_text(rule.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert cache_module.linter_fingerprint() != before


def test_every_configuration_field_is_part_of_the_key() -> None:
    """Whatever fields Config gains (per-file configuration, new options), a different value is a
    different key, except the cache's own folder and the run's warnings."""
    base = Config()
    other = {bool: lambda v: not v, str: lambda v: (v or "") + "x", tuple: lambda v: (*v, "X"),
             dict: lambda v: {**v, "k": "v"}, type(None): lambda v: (3, 99)}
    for field in dataclasses.fields(Config):
        value = getattr(base, field.name)
        changed = dataclasses.replace(base, **{field.name: other[type(value)](value)})
        if field.name in ("cache_dir", "warnings"):
            assert settings_key(changed) == settings_key(base), field.name
        else:
            assert settings_key(changed) != settings_key(base), field.name


def test_no_cache_writes_nothing_and_fixes_never_use_it(project, capsys) -> None:
    assert check(capsys, ".", "--no-cache")[0] == 1
    assert not (project / DEFAULT_CACHE_DIR).exists()
    cli.main(["check", ".", "--diff", "--unsafe-fixes"])
    cli.main(["check", ".", "--fix", "--unsafe-fixes"])
    capsys.readouterr()
    assert not (project / DEFAULT_CACHE_DIR).exists()


def test_cache_dir_option_and_flag(project, capsys) -> None:
    with open(project / "pyproject.toml", "a", encoding="utf-8") as stream:
        stream.write("[tool.tfproc-lint]\ncache-dir = 'build/lint-cache'\n")
    check(capsys, ".")
    assert len(list((project / "build" / "lint-cache").glob("*/*.json"))) == 1  # relative to pyproject.toml
    assert not (project / DEFAULT_CACHE_DIR).exists()
    check(capsys, ".", "--cache-dir", "elsewhere")
    assert len(list((project / "elsewhere").glob("*/*.json"))) == 1


def test_corrupt_entries_are_misses(project, analysed, capsys) -> None:
    first = check(capsys, ".")
    for entry in (project / DEFAULT_CACHE_DIR).glob("*/*.json"):
        entry.write_text('{"diagnostics": [{"code": "TFP', encoding="utf-8")
    assert check(capsys, ".") == first and len(analysed) == 2
    for entry in (project / DEFAULT_CACHE_DIR).glob("*/*.json"):
        entry.write_text(json.dumps({"diagnostics": [{"code": 1}]}), encoding="utf-8")
    assert check(capsys, ".") == first and len(analysed) == 3
    assert check(capsys, ".") == first and len(analysed) == 3  # rewritten


def test_an_unusable_cache_folder_is_one_warning(project, capsys) -> None:
    (project / "blocked").write_text("a file, not a folder", encoding="utf-8")
    code = cli.main(["check", "-j1", ".", "--cache-dir", "blocked/cache"])
    captured = capsys.readouterr()
    assert code == 1 and "TFP201" in captured.out
    warnings = [line for line in captured.err.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "cache disabled: cannot use blocked/cache" in warnings[0]


def test_an_unwritable_entry_folder_is_ignored(project, analysed, capsys) -> None:
    cache, warning = open_cache(project / "c")
    assert cache is not None and not warning
    shutil.rmtree(cache.directory)  # removed while the run goes on
    result = batch.check_files([_source(project / "job.py")], Config(), jobs=1, cache=cache)
    assert [d.code for d in result[0].diagnostics] == ["TFP201"]


@pytest.mark.slow
def test_workers_read_and_write_the_same_entries(project, monkeypatch) -> None:
    files = [_source(path) for path in sorted((ROOT / "fixtures" / "lint").rglob("*.py"))[:60]]
    monkeypatch.setattr(batch, "PARALLEL_MIN_FILES", 0)
    expected = batch.check_files(files, Config(), jobs=1)
    cache, _ = open_cache(project / "c")
    cold = batch.check_files(files, Config(), jobs=2, cache=cache)
    stored = len(list(cache.directory.glob("*.json")))
    warm = batch.check_files(files, Config(), jobs=2, cache=cache)
    assert _plain(cold) == _plain(warm) == _plain(expected) and stored > 20
    assert not list(cache.directory.glob(".*.tmp"))  # every write finished with its rename
    fixes = batch.check_files(files, Config(), jobs=1, cache=cache, fix_edits=True)  # another key
    assert len(list(cache.directory.glob("*.json"))) == 2 * stored  # stored apart, not read back
    assert _plain(fixes) == _plain(batch.check_files(files, Config(), jobs=1, fix_edits=True))


def test_a_warm_run_does_not_import_the_analysis(project) -> None:
    command = [sys.executable, "-c", "import sys; from tfproc_lint.cli import main; code = main(['check', '.']); "
               "print(code, 'libcst' in sys.modules)"]
    cold = processes.run(command, cwd=project, capture_output=True, text=True, env=run_env(), check=True)
    warm = processes.run(command, cwd=project, capture_output=True, text=True, env=run_env(), check=True)
    assert cold.stdout.splitlines()[-1] == "1 True"
    assert warm.stdout.splitlines()[-1] == "1 False" and warm.stdout.splitlines()[:-1] == cold.stdout.splitlines()[:-1]


@pytest.fixture
def settled(monkeypatch) -> None:
    monkeypatch.setattr(cache_module, "RACY_SECONDS", -3600.0)


def test_the_file_index_answers_for_unchanged_files_without_reading_them(
        project, settled, read, analysed, capsys) -> None:
    first = check(capsys, ".")
    assert sorted(read) == ["./job.py", "./plain.py"]
    assert check(capsys, ".") == first and len(read) == 2 and analysed == ["./job.py"]
    index = json.loads(next((project / DEFAULT_CACHE_DIR).glob(f"*/{cache_module.INDEX_NAME}")).read_text())
    assert sorted(index) == ["0./job.py", "0./plain.py"] and index["0./plain.py"][-1] == cache_module.PREFILTERED
    code, out = check(capsys, "job.py")
    assert code == 1 and out.startswith("job.py:9:10: TFP201") and read[2:] == ["job.py"]  # named: another entry


def test_a_file_changed_to_the_same_size_and_time_is_read_again(project, settled, read, analysed, capsys) -> None:
    """Only the status-change time (which no program can set back) tells these writes apart."""
    import os

    job = project / "job.py"
    assert "TFP201" in check(capsys, ".")[1]
    before = job.stat()
    changed = FORKED.replace("with mp.Pool(2)", "with np.Pool(2)")  # not multiprocessing's: no finding
    assert len(changed) == len(FORKED)
    job.write_text(changed, encoding="utf-8")
    os.utime(job, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert job.stat().st_size == before.st_size and job.stat().st_mtime_ns == before.st_mtime_ns
    out = check(capsys, ".")[1]
    assert "TFP201" not in out and "./job.py" in read[2:] and len(analysed) == 2
    # replaced by another file (a new inode) with the old size and times: read again too
    replacement = project / "replacement.tmp"
    replacement.write_text(FORKED, encoding="utf-8")
    os.utime(replacement, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(replacement, job)
    assert "TFP201" in check(capsys, ".")[1] and read.count("./job.py") == 3


def test_a_recently_changed_file_is_not_remembered(project, read, capsys) -> None:
    """Written less than RACY_SECONDS ago: it could change again within the same timestamp."""
    if cache_module.RACY_SECONDS < 0:
        pytest.skip("the settled project remembers everything")
    check(capsys, ".")
    check(capsys, ".")
    assert sorted(read) == ["./job.py", "./job.py", "./plain.py", "./plain.py"]


def test_a_changed_configuration_is_checked_again_for_remembered_files(project, settled, analysed, capsys) -> None:
    assert "TFP201" in check(capsys, ".")[1]
    assert "TFP201" in check(capsys, ".")[1] and len(analysed) == 1
    assert "TFP201" not in check(capsys, ".", "--ignore", "TFP201")[1]
    assert "TFP201" in check(capsys, ".", "--select", "TFP201")[1] and len(analysed) == 3


def test_a_corrupt_file_index_is_ignored(project, settled, read, capsys) -> None:
    first = check(capsys, ".")
    index = next((project / DEFAULT_CACHE_DIR).glob(f"*/{cache_module.INDEX_NAME}"))
    for broken in ('{"0./job.py": [1, 2', '[]', '{"0./job.py": [1, 2, 3], "0./plain.py": "x"}'):
        index.write_text(broken, encoding="utf-8")
        assert check(capsys, ".") == first
    assert len(read) == 8  # each of the three broken indexes answered for nothing


def test_a_stored_result_reads_back_equal() -> None:
    source = ROOT / "examples" / "keras_batch_inference.py"
    diagnostics = engine.lint_source(source.read_text(encoding="utf-8"), "x.py", fix_edits=True)
    assert diagnostics and any(d.fix and d.fix.edits for d in diagnostics) and any(d.related for d in diagnostics)
    assert [cache_module._diagnostic(json.loads(json.dumps(cache_module._encoded(d)))) for d in diagnostics] \
        == diagnostics


def _source(path: Path):
    from tfproc_lint.files import SourceFile

    return SourceFile(path, str(path))


def _plain(results) -> list:
    return [(r.path, r.diagnostics, r.error) for r in results]


def test_the_batch_module_names_the_same_prefiltered_outcome() -> None:
    """batch.py keeps its own copy so that a run without a cache never imports cache.py."""
    from tfproc_lint import batch

    assert batch._PREFILTERED == cache_module.PREFILTERED


def test_the_file_index_remembers_a_stopped_file_only_when_its_verdict_is_its_own(
        project, settled, read, capsys) -> None:
    """A file that starts processes but names no TensorFlow: stopped by the pre-filter. When it
    imports no project module, that verdict is its own and the index remembers it; when it imports
    one (whose edit could change the verdict), it is read again on every run."""
    (project / "helpers.py").write_text("def double(x):\n    return 2 * x\n", encoding="utf-8")
    (project / "alone.py").write_text("import multiprocessing as mp\n\nwith mp.Pool(2) as pool:\n"
                                      "    print(pool.map(abs, [-1, 2]))\n", encoding="utf-8")
    (project / "with_helper.py").write_text("import multiprocessing as mp\n\nfrom helpers import double\n\n"
                                            "with mp.Pool(2) as pool:\n    print(pool.map(double, [1, 2]))\n",
                                            encoding="utf-8")
    check(capsys, ".")
    index = json.loads(next((project / DEFAULT_CACHE_DIR).glob(f"*/{cache_module.INDEX_NAME}")).read_text())
    assert index["0./alone.py"][-1] == cache_module.PREFILTERED and "0./with_helper.py" not in index
    read.clear()
    check(capsys, ".")
    assert read == ["./with_helper.py"]
