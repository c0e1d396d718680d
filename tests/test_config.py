"""Configuration: where each option is read, precedence, errors that name the option (docs/configuration.md)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import processes
from conftest import ROOT, run_env, tool

from tfproc_lint.cli import main
from tfproc_lint.config import DEFAULT_EXCLUDE, OPTIONS, Config, ConfigError, apply_options, load_config

TFP201_BAD = ROOT / "fixtures" / "lint" / "TFP201" / "bad_predict_then_pool.py"  # finding only under fork


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """An empty project directory (a setup.cfg marks its root), the working directory of the test."""
    write(tmp_path / "setup.cfg", "[metadata]\nname = demo\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def lint(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["check", "-j", "1", *args])
    out, err = capsys.readouterr()
    return code, out, err


# Reading the files -------------------------------------------------------------------------------------
def test_defaults_without_configuration(project) -> None:
    config = load_config(project)
    assert config == Config()
    assert config.select == ("TFP",) and config.ignore == () and config.exclude == DEFAULT_EXCLUDE
    assert config.target_python is None and config.assume_start_method is None
    assert config.default_start_method()[0] == "fork"


def test_pyproject_table(project) -> None:
    write(project / "pyproject.toml", """\
        [tool.tfproc-lint]
        select = ["TFP1", "TFP201"]
        ignore = ["TFP103"]
        extend-exclude = ["generated"]
        target-python = "3.12"
        assume-start-method = "spawn"
        """)
    config = load_config(project)
    assert config.select == ("TFP1", "TFP201") and config.ignore == ("TFP103",)
    assert config.is_enabled("TFP101") and not config.is_enabled("TFP103") and not config.is_enabled("TFP301")
    assert config.extend_exclude == ("generated",) and config.exclude == DEFAULT_EXCLUDE
    assert config.target_python == (3, 12) and config.assume_start_method == "spawn"
    assert config.origin["select"] == "[tool.tfproc-lint] in pyproject.toml"


@pytest.mark.parametrize("section", ["tfproc_lint", "tfproc-lint"])
def test_setup_cfg_section(project, section) -> None:
    write(project / "setup.cfg", f"""\
        [{section}]
        select = TFP1, TFP2
        ignore =
            TFP102
            TFP103
        target_python = py313
        exclude = vendored
        """)
    config = load_config(project)
    assert config.select == ("TFP1", "TFP2") and config.ignore == ("TFP102", "TFP103")
    assert config.target_python == (3, 13) and config.exclude == ("vendored",)
    assert config.origin["select"] == f"[{section}] in setup.cfg"


def test_files_are_found_from_a_subdirectory(project) -> None:
    write(project / "pyproject.toml", '[tool.tfproc-lint]\nassume-start-method = "forkserver"\n')
    (project / "src" / "pkg").mkdir(parents=True)
    assert load_config(project / "src" / "pkg").assume_start_method == "forkserver"


def test_the_nearest_file_that_configures_tfproc_lint_wins(project) -> None:
    """As in Ruff, a pyproject.toml without the tool's table does not hide the configuration above
    it; one with the table (or a setup.cfg with the section) does."""
    write(project / "pyproject.toml", '[tool.tfproc-lint]\nassume-start-method = "forkserver"\n')
    write(project / "sub" / "pyproject.toml", '[project]\nname = "sub"\ndependencies = ["tfproc-lint"]\n')
    assert load_config(project / "sub").assume_start_method == "forkserver"
    write(project / "sub" / "setup.cfg", "[tfproc_lint]\nassume-start-method = spawn\n")
    assert load_config(project / "sub").assume_start_method == "spawn"


def test_without_any_tfproc_lint_table_the_nearest_project_gives_the_python_version(project) -> None:
    write(project / "setup.cfg", "[options]\npython_requires = >=3.10\n")
    write(project / "other" / "pyproject.toml", '[project]\nname = "other"\nrequires-python = ">=3.14"\n')
    assert load_config(project).target_python == (3, 10)
    assert load_config(project / "other" / "src").target_python == (3, 14)


# Each file's own configuration (hierarchical, as in Ruff) ----------------------------------------------
@pytest.fixture
def two_projects(project) -> Path:
    """This project (python_requires 3.10: fork) with a bad file, and another project's tree inside
    it (requires-python 3.14: forkserver) with the same file, which is fine there."""
    write(project / "setup.cfg", "[options]\npython_requires = >=3.10\n")
    shutil.copy(TFP201_BAD, project / "app.py")
    write(project / "vendor" / "other" / "pyproject.toml", '[project]\nname = "other"\nrequires-python = ">=3.14"\n')
    (project / "vendor" / "other" / "pkg").mkdir()
    shutil.copy(TFP201_BAD, project / "vendor" / "other" / "pkg" / "app.py")
    return project


def test_another_projects_tree_is_checked_with_its_own_configuration(two_projects, capsys) -> None:
    code, out, _ = lint(capsys, ".")
    assert code == 1
    assert "app.py:" in out and "vendor/other" not in out
    assert f"(fork assumed: target Python 3.10 from python_requires in setup.cfg: {FORK_DEFAULT})" in out
    code, out, _ = lint(capsys, "vendor/other")
    assert code == 0, out


def test_a_message_names_the_other_projects_file(two_projects, capsys) -> None:
    write(two_projects / "vendor" / "other" / "pyproject.toml",
          '[project]\nname = "other"\nrequires-python = ">=3.12"\n')
    code, out, _ = lint(capsys, "vendor/other/pkg/app.py")
    assert code == 1
    assert (f"(fork assumed: target Python 3.12 from requires-python in vendor/other/pyproject.toml: "
            f"{FORK_DEFAULT})") in out


def test_the_command_line_overrides_each_files_configuration(two_projects, capsys) -> None:
    code, out, _ = lint(capsys, ".", "--target-python", "3.12")
    assert code == 1 and "vendor/other/pkg/app.py" in out and out.count("TFP201") == 2
    code, out, _ = lint(capsys, ".", "--assume-start-method", "spawn")
    assert code == 0, out


def test_an_explicit_config_file_applies_to_every_file(two_projects, capsys) -> None:
    write(two_projects / "ci" / "lint.toml", '[tool.tfproc-lint]\ntarget-python = "3.11"\n')
    code, out, _ = lint(capsys, ".", "--config", "ci/lint.toml")
    assert code == 1 and out.count("TFP201") == 2
    assert "target Python 3.11 from target-python in [tool.tfproc-lint] in ci/lint.toml" in out


def test_a_nested_projects_excludes_apply_to_its_tree(two_projects, capsys) -> None:
    other = two_projects / "vendor" / "other"
    write(other / "pyproject.toml", '[tool.tfproc-lint]\ntarget-python = "3.12"\nextend-exclude = ["pkg"]\n')
    shutil.copy(TFP201_BAD, two_projects / "pkg.py")
    (two_projects / "pkg").mkdir()
    shutil.copy(TFP201_BAD, two_projects / "pkg" / "app.py")
    code, out, _ = lint(capsys, ".")
    assert "pkg/app.py" in out and "vendor/other" not in out


def test_a_bad_nested_configuration_is_a_config_error(two_projects, capsys) -> None:
    write(two_projects / "vendor" / "other" / "setup.cfg", "[tfproc_lint]\nassume-gpu = perhaps\n")
    code, out, err = lint(capsys, ".")
    assert code == 2 and out == ""
    assert err == ("tfproc-lint: error: assume-gpu in [tfproc_lint] in vendor/other/setup.cfg: expected true or "
                   "false, got 'perhaps'\n")


def test_worker_processes_check_each_file_with_its_own_configuration(two_projects) -> None:
    """batch's worker processes get each file's configuration with the file: the same results
    with one job and with two (at least PARALLEL_MIN_FILES files, so that workers start)."""
    from tfproc_lint import batch
    from tfproc_lint.config import Configs
    from tfproc_lint.files import collect_files

    for number in range(batch.PARALLEL_MIN_FILES // 2):
        shutil.copy(TFP201_BAD, two_projects / f"app_{number}.py")
        shutil.copy(TFP201_BAD, two_projects / "vendor" / "other" / "pkg" / f"app_{number}.py")
    files, errors = collect_files(["."], Configs())
    assert not errors and len(files) >= batch.PARALLEL_MIN_FILES
    one, two = batch.check_files(files, Config(), jobs=1), batch.check_files(files, Config(), jobs=2)
    assert [(r.path, [d.code for d in r.diagnostics]) for r in one] == \
        [(r.path, [d.code for d in r.diagnostics]) for r in two]
    flagged = {r.path for r in two if r.diagnostics}
    assert flagged == {f.display for f in files if "vendor" not in f.display}


def test_flake8_takes_each_files_project_configuration(two_projects) -> None:
    """Under flake8 the tfp- options come from flake8's configuration (the working directory's);
    tfproc-lint's own settings and requires-python come from the project nearest to each file."""
    completed = processes.run([tool("flake8"), "--select", "TFP", "app.py", "vendor/other/pkg/app.py"],
                              cwd=two_projects, env=run_env(), capture_output=True, text=True, timeout=60, check=False)
    assert "./app.py" in completed.stdout or "app.py:" in completed.stdout
    assert "vendor/other" not in completed.stdout, completed.stdout
    assert "python_requires in setup.cfg" in completed.stdout
    write(two_projects / "vendor" / "other" / "setup.cfg", "[tfproc_lint]\nassume-gpu = perhaps\n")
    completed = processes.run([tool("flake8"), "--select", "TFP", "vendor/other/pkg/app.py"],
                              cwd=two_projects, env=run_env(), capture_output=True, text=True, timeout=60, check=False)
    assert completed.returncode != 0 and "Traceback" not in completed.stdout + completed.stderr
    assert "assume-gpu in [tfproc_lint] in vendor/other/setup.cfg: expected true or false" in completed.stdout


# Precedence --------------------------------------------------------------------------------------------
def test_pyproject_overrides_setup_cfg_per_option(project) -> None:
    write(project / "setup.cfg", "[tfproc_lint]\nignore = TFP301\nassume-start-method = spawn\n")
    write(project / "pyproject.toml", '[tool.tfproc-lint]\nassume-start-method = "forkserver"\n')
    config = load_config(project)
    assert config.assume_start_method == "forkserver"  # both set it: pyproject.toml wins
    assert config.ignore == ("TFP301",)  # only setup.cfg sets it: kept


def test_command_line_overrides_files(project, capsys) -> None:
    shutil.copy(TFP201_BAD, project / "app.py")
    write(project / "pyproject.toml", '[tool.tfproc-lint]\nassume-start-method = "spawn"\n')
    assert lint(capsys, "app.py")[0] == 0  # spawn from pyproject.toml: no TFP201
    code, out, _ = lint(capsys, "app.py", "--assume-start-method", "fork")
    assert code == 1 and "TFP201" in out
    code, out, _ = lint(capsys, "app.py", "--assume-start-method", "fork", "--ignore", "TFP2")
    assert code == 0


def test_requires_python_sets_target_python(project) -> None:
    write(project / "pyproject.toml", '[project]\nname = "demo"\nrequires-python = ">=3.14"\n')
    config = load_config(project)
    assert config.target_python == (3, 14)
    assert config.default_start_method()[0] == "forkserver"
    assert "requires-python" in config.default_start_method()[1]


@pytest.mark.parametrize("specifier, expected", [(">=3.9", (3, 9)), ("~=3.11", (3, 11)), (">3.10", (3, 10)),
                                                 ("!=3.8.*,>=3.8", (3, 9)), ("==3.12.*", (3, 12))])
def test_requires_python_lowest_version(project, specifier, expected) -> None:
    write(project / "pyproject.toml", f'[project]\nname = "demo"\nrequires-python = "{specifier}"\n')
    assert load_config(project).target_python == expected


def test_python_requires_in_setup_cfg(project) -> None:
    write(project / "setup.cfg", "[options]\npython_requires = >=3.14\n")
    assert load_config(project).target_python == (3, 14)


def test_target_python_beats_requires_python(project, capsys) -> None:
    shutil.copy(TFP201_BAD, project / "app.py")
    write(project / "pyproject.toml", '[project]\nname = "demo"\nrequires-python = ">=3.14"\n')
    assert lint(capsys, "app.py")[0] == 0  # 3.14: forkserver by default, no TFP201
    write(project / "setup.cfg", "[tfproc_lint]\ntarget-python = 3.12\n")
    assert load_config(project).target_python == (3, 12)  # setup.cfg's option beats pyproject's requires-python
    assert lint(capsys, "app.py")[0] == 1
    assert lint(capsys, "app.py", "--target-python", "3.14")[0] == 0  # and the command line beats both


def test_assume_start_method_beats_target_python(project) -> None:
    write(project / "pyproject.toml", '[tool.tfproc-lint]\ntarget-python = "3.14"\nassume-start-method = "fork"\n')
    assert load_config(project).default_start_method()[0] == "fork"


def test_extend_select_adds_to_select_in_any_order(project) -> None:
    write(project / "pyproject.toml", '[tool.tfproc-lint]\nextend-select = ["TFP301"]\nselect = ["TFP1"]\n')
    assert load_config(project).select == ("TFP1", "TFP301")
    config = apply_options(load_config(project), {"extend-select": "TFP201"}, "the command line")
    assert config.select == ("TFP1", "TFP301", "TFP201")


def test_explicit_config_file_replaces_discovery(project, capsys) -> None:
    shutil.copy(TFP201_BAD, project / "app.py")
    write(project / "pyproject.toml", '[tool.tfproc-lint]\nassume-start-method = "spawn"\n')
    elsewhere = write(project / "ci" / "lint.toml", '[tool.tfproc-lint]\nassume-start-method = "fork"\n')
    assert load_config(project, elsewhere).assume_start_method == "fork"
    assert lint(capsys, "app.py")[0] == 0
    assert lint(capsys, "app.py", "--config", "ci/lint.toml")[0] == 1
    ini = write(project / "ci" / "lint.cfg", "[tfproc_lint]\nassume-start-method = forkserver\n")
    assert load_config(project, ini).assume_start_method == "forkserver"


# Where an assumed start method came from ---------------------------------------------------------------
FORK_DEFAULT = "fork is the Linux default"


@pytest.mark.parametrize("files, options, expected", [
    ({}, {}, ("fork", "no start method set; fork is the Linux default before Python 3.14")),
    ({"setup.cfg": "[options]\npython_requires = >=3.10\n"}, {},
     ("fork", f"target Python 3.10 from python_requires in setup.cfg: {FORK_DEFAULT}")),
    ({"pyproject.toml": '[project]\nrequires-python = ">=3.14"\n'}, {},
     ("forkserver", "target Python 3.14 from requires-python in pyproject.toml: forkserver is the Linux default")),
    ({"setup.cfg": "[tfproc_lint]\ntarget-python = 3.12\n"}, {},
     ("fork", f"target Python 3.12 from target-python in [tfproc_lint] in setup.cfg: {FORK_DEFAULT}")),
    ({}, {"target-python": "3.11"}, ("fork", f"target Python 3.11 from --target-python: {FORK_DEFAULT}")),
    ({"pyproject.toml": '[tool.tfproc-lint]\nassume-start-method = "spawn"\n'}, {},
     ("spawn", "assume-start-method in [tool.tfproc-lint] in pyproject.toml")),
    ({}, {"assume-start-method": "forkserver"}, ("forkserver", "--assume-start-method")),
])
def test_assumed_start_method_says_where_it_came_from(project, files, options, expected) -> None:
    for name, text in files.items():
        write(project / name, text)
    config = load_config(project)
    if options:
        config = apply_options(config, options, "the command line")
    assert config.default_start_method() == expected


def test_finding_names_the_target_version_and_its_source(project, capsys) -> None:
    shutil.copy(TFP201_BAD, project / "app.py")
    write(project / "setup.cfg", "[options]\npython_requires = >=3.10\n")
    code, out, _ = lint(capsys, "app.py")
    assert code == 1
    assert f"(fork assumed: target Python 3.10 from python_requires in setup.cfg: {FORK_DEFAULT})" in out


# Errors ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, expected", [
    ('[tool.tfproc-lint]\nselct = ["TFP1"]\n', "unknown option 'selct' in [tool.tfproc-lint] in pyproject.toml"),
    ('[tool.tfproc-lint]\nselect = ["tfp1"]\n', "select in [tool.tfproc-lint] in pyproject.toml: 'tfp1' is not a rule"),
    ('[tool.tfproc-lint]\nignore = 7\n', "ignore in [tool.tfproc-lint] in pyproject.toml: expected a list of strings"),
    ('[tool.tfproc-lint]\ntarget-python = "three"\n',
     "target-python in [tool.tfproc-lint] in pyproject.toml: expected"),
    ('[tool.tfproc-lint]\ntarget-python = 3.10\n',
     'target-python in [tool.tfproc-lint] in pyproject.toml: write the version as a string, e.g. "3.10"'),
    ('[tool.tfproc-lint]\nassume-start-method = "thread"\n',
     "assume-start-method in [tool.tfproc-lint] in pyproject.toml: expected one of fork, spawn, forkserver"),
    ('[tool.tfproc-lint]\nexclude = [1, 2]\n', "exclude in [tool.tfproc-lint] in pyproject.toml: expected a list"),
    ("[tool.tfproc-lint]\nselect = [\n", "cannot read"),
    ('tool.tfproc-lint = "TFP1"\n', "[tool.tfproc-lint] in"),
])
def test_bad_pyproject_names_the_option(project, capsys, text, expected) -> None:
    write(project / "pyproject.toml", text)
    with pytest.raises(ConfigError) as error:
        load_config(project)
    assert expected in str(error.value)
    code, out, err = lint(capsys, ".")
    assert code == 2 and out == ""
    assert err.startswith("tfproc-lint: error: ") and expected in err


@pytest.mark.parametrize("text, expected", [
    ("[tfproc_lint]\ntarget-pyhton = 3.12\n", "unknown option 'target-pyhton' in [tfproc_lint] in setup.cfg"),
    ("[tfproc-lint]\nassume_start_method = vfork\n", "assume-start-method in [tfproc-lint] in setup.cfg: expected"),
    ("[tfproc_lint]\nselect = TFP1\nselect = TFP2\n", "cannot read"),
    ("# tfproc-lint's settings\nselect = TFP1\n", "cannot read"),
])
def test_bad_setup_cfg_names_the_option(project, capsys, text, expected) -> None:
    write(project / "setup.cfg", text)
    code, out, err = lint(capsys, ".")
    assert code == 2 and out == "" and expected in err


@pytest.mark.parametrize("text, expected", [
    ("[tfproc_lint\nselect = TFP1\n", "cannot read {path}: line 1: '[tfproc_lint' comes before any [section] header"),
    ("; tfproc-lint\nselect = TFP1\n",
     "cannot read {path}: line 2: 'select = TFP1' comes before any [section] header"),
    ("[tfproc_lint]\nselect = TFP1\nselect = TFP2\n",
     "cannot read {path}: line 3: option 'select' is given twice in [tfproc_lint]"),
    ("[tfproc_lint]\n[metadata]\nname = x\n[metadata]\n",
     "cannot read {path}: line 4: section [metadata] is given twice"),
    ("[tfproc_lint]\nselect = TFP1\n  [oops\nwhat\n",
     "cannot parse 'what', neither `key = value` nor a [section] header"),
])
def test_a_broken_setup_cfg_is_one_line_naming_the_file_and_the_line(project, capsys, text, expected) -> None:
    write(project / "setup.cfg", text)
    code, out, err = lint(capsys, ".")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and expected.format(path=project / "setup.cfg") in err


# Another tool's metadata never stops a run -------------------------------------------------------------
BAD_METADATA = [
    # (file, text, the warning): a real public project ships `python_requires = >="3.6"`
    ("setup.cfg", '[options]\npython_requires = >="3.6"\n',
     """python_requires in vendor/other/setup.cfg: '>="3.6"' is not a valid version specifier; ignored, """
     "as if absent"),
    ("pyproject.toml", '[project]\nname = "other"\nrequires-python = "3.10+"\n',
     "requires-python in vendor/other/pyproject.toml: '3.10+' is not a valid version specifier; ignored, as if absent"),
    ("pyproject.toml", '[project]\nname = "other"\nrequires-python = 3.6\n',
     "requires-python in vendor/other/pyproject.toml: expected a version specifier string, got 3.6; ignored"),
    ("pyproject.toml", '[project\nname = "other"\n', "vendor/other/pyproject.toml: Expected ']'"),
    ("setup.cfg", "[metadata]\nname = x\n[metadata]\n",
     "vendor/other/setup.cfg: line 3: section [metadata] is given twice; its python_requires is ignored"),
    ("setup.cfg", "[metadata]\nauthor = J\xfcrgen\n".encode("latin-1"), "vendor/other/setup.cfg: 'utf-8' codec"),
]


@pytest.mark.parametrize("name, text, warning", BAD_METADATA)
def test_bad_metadata_of_another_project_is_one_warning_and_the_run_goes_on(
        two_projects, capsys, name, text, warning) -> None:
    """A vendored project's bad `requires-python` / `python_requires` (or a file of its that cannot be
    read at all, but cannot hold tfproc-lint's settings) used to stop the whole run (exit 2, nothing
    linted). Now: one warning naming the file, and its files are checked as if it had none."""
    (two_projects / "vendor" / "other" / "pyproject.toml").unlink()
    path = two_projects / "vendor" / "other" / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    shutil.copy(TFP201_BAD, two_projects / "vendor" / "other" / "pkg" / "more.py")  # two files, one warning
    code, out, err = lint(capsys, ".")
    assert code == 1, err
    assert out.count("TFP201") == 3 and "vendor/other/pkg/app.py" in out and "vendor/other/pkg/more.py" in out
    assert "(fork assumed: no start method set; fork is the Linux default before Python 3.14)" in out  # as if absent
    assert f"(fork assumed: target Python 3.10 from python_requires in setup.cfg: {FORK_DEFAULT})" in out  # ours
    assert err.count("tfproc-lint: warning: ") == 1 and err.count(warning) == 1, err
    assert "error" not in err


def test_a_bad_requires_python_beside_tfproc_lints_own_table_is_a_warning_too(project, capsys) -> None:
    """The table's settings still apply; only the metadata is ignored."""
    shutil.copy(TFP201_BAD, project / "app.py")
    metadata = '[project]\nrequires-python = ">=3.10.*"\n\n'
    write(project / "pyproject.toml", metadata + '[tool.tfproc-lint]\nignore = ["TFP2"]\n')
    code, out, err = lint(capsys, ".")
    assert (code, out) == (0, "All checks passed.\n")
    assert "requires-python in pyproject.toml: '>=3.10.*' is not a valid version specifier; ignored" in err
    write(project / "pyproject.toml", metadata + '[tool.tfproc-lint]\nignore = ["TFP9"]\n')
    code, out, err = lint(capsys, ".")
    assert code == 2 and "ignore in [tool.tfproc-lint] in pyproject.toml: 'TFP9' matches no rule" in err


def test_a_broken_file_named_by_config_is_still_an_error(project, capsys) -> None:
    write(project / "other.toml", '[project\nname = "other"\n')
    code, out, err = lint(capsys, ".", "--config", "other.toml")
    assert code == 2 and out == "" and err.startswith("tfproc-lint: error: cannot read other.toml: Expected")


@pytest.mark.parametrize("text", ['project = "other"\n', "tool = 3\n", '[project]\nrequires-python = ""\n'])
def test_metadata_of_an_unexpected_shape_is_ignored(project, text) -> None:
    write(project / "pyproject.toml", text)
    config = load_config(project)
    assert config.target_python is None and config.warnings == ()


def test_flake8_goes_on_past_bad_metadata(two_projects) -> None:
    """The flake8 plugin loads each file's nearest project too: a warning, not flake8's critical error."""
    write(two_projects / "vendor" / "other" / "pyproject.toml", '[project]\nrequires-python = ">=\\"3.6\\""\n')
    completed = processes.run([tool("flake8"), "--select", "TFP", "app.py", "vendor/other/pkg/app.py"],
                              cwd=two_projects, env=run_env(), capture_output=True, text=True, timeout=60, check=False)
    assert completed.returncode == 1, completed.stderr
    assert completed.stdout.count("TFP201") == 2
    assert completed.stderr.count("requires-python in vendor/other/pyproject.toml: '>=\"3.6\"' is not a valid "
                                  "version specifier; ignored, as if absent") == 1, completed.stderr


def test_the_server_warns_about_bad_metadata_and_lints(two_projects) -> None:
    from tfproc_lint.server.configs import Configs as ServerConfigs

    write(two_projects / "vendor" / "other" / "setup.cfg", '[options]\npython_requires = >="3.6"\n')
    reports = []
    configs = ServerConfigs(lambda level, line: reports.append((level, line)))
    config = configs.for_path(two_projects / "vendor" / "other" / "setup.py")
    assert config.target_python == (3, 14)  # as if absent: from its pyproject.toml's requires-python
    assert configs.for_path(two_projects / "vendor" / "other" / "pkg" / "app.py") is config
    assert [level for level, _ in reports] == ["warning"]
    assert "python_requires in vendor/other/setup.cfg: '>=\"3.6\"' is not a valid version specifier" in reports[0][1]


@pytest.mark.parametrize("args, expected", [
    (["--select", ""], "--select is empty: it would check nothing"),
    (["--select", " , "], "--select is empty: it would check nothing"),
    (["--select", "TFP1", "--ignore", "TFP1"], "select and ignore (the command line) enable no rule"),
])
def test_a_selection_that_checks_nothing_is_a_usage_error(project, capsys, args, expected) -> None:
    shutil.copy(TFP201_BAD, project / "app.py")
    code, out, err = lint(capsys, "app.py", *args)
    assert code == 2 and out == "" and expected in err and "All checks passed" not in out + err


def test_an_empty_select_filled_by_extend_select_is_accepted(project, capsys) -> None:
    shutil.copy(TFP201_BAD, project / "app.py")
    code, out, _ = lint(capsys, "app.py", "--select", "", "--extend-select", "TFP201")
    assert code == 1 and "TFP201" in out


@pytest.mark.parametrize("name, text, expected", [
    ("pyproject.toml", "[tool.tfproc-lint]\nselect = []\n", "select in [tool.tfproc-lint] in pyproject.toml is empty"),
    ("setup.cfg", "[tfproc_lint]\nselect =\n", "select in [tfproc_lint] in setup.cfg is empty"),
    ("setup.cfg", "[tfproc_lint]\nignore = TFP\n", "select and ignore ([tfproc_lint] in setup.cfg) enable no rule"),
])
def test_a_configured_selection_that_checks_nothing_is_a_config_error(project, capsys, name, text, expected) -> None:
    write(project / name, text)
    code, out, err = lint(capsys, ".")
    assert code == 2 and out == "" and expected in err


def test_unknown_option_lists_the_known_ones(project) -> None:
    with pytest.raises(ConfigError) as error:
        apply_options(Config(), {"line-length": 100}, "the command line")
    assert all(name in str(error.value) for name in OPTIONS)


@pytest.mark.parametrize("args, expected", [
    (["--target-python", "2.7"], "target-python in the command line: expected a Python version"),
    (["--select", "TFP1,nope"], "select in the command line: 'nope' is not a rule code"),
    (["--config", "missing.toml"], "config file missing.toml does not exist"),
])
def test_bad_command_line_value_exits_2(project, capsys, args, expected) -> None:
    code, out, err = lint(capsys, ".", *args)
    assert code == 2 and out == "" and expected in err


def test_bad_choice_exits_2_through_argparse(project) -> None:
    completed = processes.run([tool("tfproc-lint"), "check", "--assume-start-method", "thread", "."], cwd=project,
                              env=run_env(), capture_output=True, text=True, timeout=60, check=False)
    assert completed.returncode == 2
    assert "--assume-start-method" in completed.stderr and "'thread'" in completed.stderr


# Selectors that match no rule -------------------------------------------------------------------------
@pytest.mark.parametrize("args, expected", [
    (["--select", "TFP9"], "select in the command line: 'TFP9' matches no rule"),
    (["--select", "TFP1,X"], "select in the command line: 'X' matches no rule"),
    (["--ignore", "TFP999"], "ignore in the command line: 'TFP999' matches no rule"),
    (["--extend-select", "TFP8"], "extend-select in the command line: 'TFP8' matches no rule"),
])
def test_unknown_selector_on_the_command_line_exits_2(project, capsys, args, expected) -> None:
    code, out, err = lint(capsys, ".", *args)
    assert code == 2 and out == ""
    assert err.startswith("tfproc-lint: error: ") and expected in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("name, text, expected", [
    ("pyproject.toml", '[tool.tfproc-lint]\nselect = ["TFP9"]\n',
     "select in [tool.tfproc-lint] in pyproject.toml: 'TFP9' matches no rule"),
    ("pyproject.toml", '[tool.tfproc-lint]\nextend-select = ["TFP8"]\n',
     "extend-select in [tool.tfproc-lint] in pyproject.toml: 'TFP8' matches no rule"),
    ("setup.cfg", "[tfproc_lint]\nignore = TFP301, TFP999\n",
     "ignore in [tfproc_lint] in setup.cfg: 'TFP999' matches no rule"),
    ("setup.cfg", "[tfproc-lint]\nselect = X\n", "select in [tfproc-lint] in setup.cfg: 'X' matches no rule"),
])
def test_unknown_selector_in_a_file_exits_2(project, capsys, name, text, expected) -> None:
    write(project / name, text)
    code, out, err = lint(capsys, ".")
    assert code == 2 and out == "" and expected in err


@pytest.mark.parametrize("selector", ["TFP", "TFP1", "TFP10", "TFP101", "TFP3"])
def test_selectors_that_match_a_rule_are_accepted(project, capsys, selector) -> None:
    write(project / "pyproject.toml", f'[tool.tfproc-lint]\nextend-select = ["{selector}"]\n')
    assert lint(capsys, ".", "--select", selector, "--ignore", "TFP204")[0] == 0


def test_rule_codes_from_module_names_are_the_rules_codes() -> None:
    from tfproc_lint.rules import rule_codes
    from tfproc_lint.rules.base import all_rules

    assert rule_codes() == [rule.code for rule in all_rules()]


def test_rule_names_from_module_names_are_the_rules_names() -> None:
    """A rule module's file name carries its code and its name (tfp201_runtime_initialised_before_fork.py):
    names are translated to codes without importing the rules."""
    from tfproc_lint.rules import rule_names
    from tfproc_lint.rules.base import all_rules

    assert rule_names() == {rule.name: rule.code for rule in all_rules()}


# Rules' names wherever codes go ------------------------------------------------------------------------
def test_rule_names_select_and_ignore_on_the_command_line(project, capsys) -> None:
    shutil.copy(TFP201_BAD, project / "app.py")
    code, out, _ = lint(capsys, "app.py", "--select", "session-crosses-process,TFP3")
    assert code == 0, out
    code, out, _ = lint(capsys, "app.py", "--select", "runtime-initialised-before-fork")
    assert code == 1 and "TFP201" in out
    assert lint(capsys, "app.py", "--ignore", "runtime-initialised-before-fork")[0] == 0
    code, out, _ = lint(capsys, "app.py", "--select", "TFP1", "--extend-select", "runtime-initialised-before-fork")
    assert code == 1 and "TFP201" in out


def test_rule_names_in_both_files(project, capsys) -> None:
    shutil.copy(TFP201_BAD, project / "app.py")
    write(project / "pyproject.toml", '[tool.tfproc-lint]\nignore = ["runtime-initialised-before-fork"]\n')
    assert lint(capsys, "app.py")[0] == 0
    write(project / "pyproject.toml", """\
        [tool.tfproc-lint]
        select = ["TFP1"]
        extend-select = ["model-per-cpu", "runtime-initialised-before-fork"]
        [tool.tfproc-lint.per-file-ignores]
        "other.py" = ["runtime-initialised-before-fork"]
        """)
    config = load_config(project)
    assert config.select == ("TFP1", "TFP302", "TFP201") and config.is_enabled("TFP302", default_enabled=False)
    assert config.per_file_ignores[0].codes == ("TFP201",)
    shutil.copy(TFP201_BAD, project / "other.py")
    assert lint(capsys, "app.py")[0] == 1 and lint(capsys, "other.py")[0] == 0
    (project / "pyproject.toml").unlink()
    write(project / "setup.cfg", """\
        [tfproc_lint]
        ignore = session-crosses-process, TFP3
        per-file-ignores =
            tests/*: runtime-initialised-before-fork TFP101
            app.py: runtime-initialised-before-fork
        """)
    config = load_config(project)
    assert config.ignore == ("TFP101", "TFP3")
    assert [(entry.pattern, entry.codes) for entry in config.per_file_ignores] == [
        ("tests/*", ("TFP201", "TFP101")), ("app.py", ("TFP201",))]
    code, out, _ = lint(capsys, "app.py")
    assert code == 0, out


@pytest.mark.parametrize("where, args, expected", [
    ("cli", ["--select", "runtime-initialised-befor-fork"],
     "select in the command line: 'runtime-initialised-befor-fork' is no rule's name; `tfproc-lint rules` lists"),
    ("cli", ["--ignore", "Session-Crosses-Process"],
     "ignore in the command line: 'Session-Crosses-Process' is not a rule code, prefix or name"),
    ("pyproject.toml", '[tool.tfproc-lint]\nextend-select = ["model-per-gpu"]\n',
     "extend-select in [tool.tfproc-lint] in pyproject.toml: 'model-per-gpu' is no rule's name"),
    ("pyproject.toml", '[tool.tfproc-lint.per-file-ignores]\n"a.py" = ["no-such-rule"]\n',
     "per-file-ignores in [tool.tfproc-lint] in pyproject.toml for 'a.py': 'no-such-rule' is no rule's name"),
])
def test_an_unknown_rule_name_is_one_line_naming_where(project, capsys, where, args, expected) -> None:
    shutil.copy(TFP201_BAD, project / "app.py")
    if where != "cli":
        write(project / where, args)
        args = []
    code, out, err = lint(capsys, "app.py", *args)
    assert code == 2 and out == "" and err.count("\n") == 1 and expected in err, err


def test_flake8_warns_that_its_own_selection_takes_codes_only(project) -> None:
    """flake8 decides select and ignore by code; a name there would silently do nothing."""
    shutil.copy(TFP201_BAD, project / "app.py")
    completed = flake8(project, "--extend-ignore", "runtime-initialised-before-fork")
    assert "TFP201" in completed.stdout
    assert completed.stderr.count("tfproc-lint: warning: flake8's extend-ignore takes codes, not rule names: "
                                  "'runtime-initialised-before-fork' does nothing; write TFP201") == 1


def test_selectors_are_checked_without_importing_libcst(project) -> None:
    """The rules' codes come from their module names: a run that parses nothing imports no LibCST."""
    write(project / "plain.py", "x = 1\n")
    script = ("import sys; from tfproc_lint.cli import main; code = main(['check', '--select', 'TFP1', '.']); "
              "print(code, 'libcst' in sys.modules)")
    completed = processes.run([sys.executable, "-c", script], cwd=project, env=run_env(), capture_output=True,
                              text=True, timeout=60, check=False)
    assert completed.stdout.split()[-2:] == ["0", "False"], completed.stderr


# Misspelled tables -------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, text, expected", [
    ("pyproject.toml", "[tool.tfproc_lint]\nselect = ['TFP1']\n",
     "[tool.tfproc_lint] in pyproject.toml is not read: the table is spelled [tool.tfproc-lint]"),
    ("pyproject.toml", "[tool.tfproclint]\nselect = ['TFP1']\n",
     "[tool.tfproclint] in pyproject.toml is not read: the table is spelled [tool.tfproc-lint]"),
    ("pyproject.toml", "[tool.TFProc-Lint]\nselect = ['TFP1']\n",
     "[tool.TFProc-Lint] in pyproject.toml is not read: the table is spelled [tool.tfproc-lint]"),
    ("pyproject.toml", "[tfproc-lint]\nselect = ['TFP1']\n",
     "[tfproc-lint] in pyproject.toml is not read: the table is spelled [tool.tfproc-lint]"),
    ("setup.cfg", "[tfproclint]\nselect = TFP1\n",
     "[tfproclint] in setup.cfg is not read: the section is spelled [tfproc_lint] or [tfproc-lint]"),
    ("setup.cfg", "[tool:tfproc-lint]\nselect = TFP1\n",
     "[tool:tfproc-lint] in setup.cfg is not read: the section is spelled [tfproc_lint] or [tfproc-lint]"),
])
def test_misspelled_table_is_a_warning_and_the_run_goes_on(project, capsys, name, text, expected) -> None:
    write(project / name, text)
    shutil.copy(TFP201_BAD, project / "app.py")
    code, out, err = lint(capsys, "app.py")
    assert code == 1 and "TFP201" in out  # the misspelled table's select = TFP1 was not applied
    assert err == f"tfproc-lint: warning: {expected}\n"


def test_right_spellings_give_no_warning(project, capsys) -> None:
    write(project / "pyproject.toml", "[tool.tfproc-lint]\nselect = ['TFP1']\n[tool.ruff]\nline-length = 100\n")
    write(project / "setup.cfg", "[tfproc_lint]\nignore = TFP103\n[tfproc-lint]\nignore = TFP102\n[flake8]\n")
    assert load_config(project).warnings == ()
    write(project / "app.py", "x = 1\n")  # a file to check: no "no Python files found" warning either
    assert lint(capsys, ".")[2] == ""


# flake8 ------------------------------------------------------------------------------------------------
def flake8(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return processes.run([tool("flake8"), "--select", "TFP", *args, "app.py"], cwd=cwd, env=run_env(),
                         capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.slow
def test_flake8_options_and_files(project) -> None:
    shutil.copy(TFP201_BAD, project / "app.py")
    assert "TFP201" in flake8(project).stdout
    assert flake8(project, "--tfp-target-python", "3.14").stdout == ""
    assert flake8(project, "--tfp-assume-start-method", "spawn").stdout == ""
    # flake8's own config file
    write(project / ".flake8", "[flake8]\ntfp-assume-start-method = forkserver\n")
    assert flake8(project).stdout == ""
    (project / ".flake8").unlink()
    # tfproc-lint's own settings apply under flake8 too; flake8's options override them
    write(project / "pyproject.toml", '[tool.tfproc-lint]\ntarget-python = "3.14"\n')
    assert flake8(project).stdout == ""
    assert "TFP201" in flake8(project, "--tfp-target-python", "3.12").stdout


def test_flake8_warns_about_a_misspelled_table(project) -> None:
    shutil.copy(TFP201_BAD, project / "app.py")
    write(project / "pyproject.toml", '[tool.tfproc_lint]\ntarget-python = "3.14"\n')
    completed = flake8(project)
    assert "TFP201" in completed.stdout
    assert completed.stderr.count("tfproc-lint: warning: [tool.tfproc_lint] in pyproject.toml is not read") == 1


def test_flake8_bad_choice_is_a_usage_error(project) -> None:
    shutil.copy(TFP201_BAD, project / "app.py")
    completed = flake8(project, "--tfp-assume-start-method", "thread")
    assert completed.returncode != 0 and "--tfp-assume-start-method" in completed.stderr


def test_flake8_bad_target_python_is_a_clear_error(project) -> None:
    shutil.copy(TFP201_BAD, project / "app.py")
    completed = flake8(project, "--tfp-target-python", "abc")
    assert completed.returncode != 0
    assert "target-python" in completed.stderr and "Traceback" not in completed.stderr


def test_an_opt_in_rule_needs_a_selector_more_specific_than_the_bare_prefix() -> None:
    """Opt-in rules (Rule.default_enabled = False) ignore `TFP`: bugbear's B9 and Ruff, not TorchFix."""
    default = Config()
    assert default.is_enabled("TFP302") and not default.is_enabled("TFP302", default_enabled=False)
    for selectors, enabled in ((("TFP3",), True), (("TFP30",), True), (("TFP302",), True), (("TF",), False)):
        config = apply_options(Config(), {"extend-select": list(selectors)}, "test")
        assert config.is_enabled("TFP302", default_enabled=False) is enabled, selectors
    config = apply_options(Config(), {"ignore": ["TFP3"], "extend-select": ["TFP302"]}, "test")
    assert config.is_enabled("TFP302", default_enabled=False) and not config.is_enabled("TFP303", default_enabled=False)


# assume-gpu ----------------------------------------------------------------------------------------------
GPU_POOL = """\
    import multiprocessing as mp
    import tensorflow as tf

    def embed(path):
        image = tf.io.decode_jpeg(tf.io.read_file(path))
        return tf.reduce_mean(tf.cast(image, tf.float32)).numpy()

    if __name__ == "__main__":
        with mp.get_context("spawn").Pool(4) as pool:
            print(pool.map(embed, ["a.jpg", "b.jpg"]))
    """


@pytest.mark.parametrize("text,value", [
    ('[tool.tfproc-lint]\nassume-gpu = true\n', True),
    ('[tool.tfproc-lint]\nassume-gpu = false\n', False),
])
def test_assume_gpu_option(project, text, value) -> None:
    write(project / "pyproject.toml", text)
    config = load_config(project)
    assert config.assume_gpu is value
    assert config.gpu_assumed() == ("assume-gpu in [tool.tfproc-lint] in pyproject.toml" if value else "")


@pytest.mark.parametrize("name,text", [
    ("requirements.txt", "numpy\ntensorflow[and-cuda]==2.21.0\n"),
    ("pyproject.toml", '[project]\nname = "x"\ndependencies = ["tensorflow[and-cuda]>=2.15", "numpy"]\n'),
    ("setup.cfg", "[options]\ninstall_requires =\n    tensorflow-gpu==2.4.1\n"),
])
def test_a_gpu_build_of_tensorflow_in_the_dependencies_assumes_a_gpu(project, name, text) -> None:
    write(project / name, text)
    config = load_config(project)
    assert config.assume_gpu
    assert config.gpu_assumed().startswith("the project depends on tensorflow") and name in config.gpu_assumed()


def test_an_explicit_assume_gpu_beats_the_dependencies(project) -> None:
    write(project / "requirements.txt", "tensorflow[and-cuda]\n")
    write(project / "pyproject.toml", "[tool.tfproc-lint]\nassume-gpu = false\n")
    assert not load_config(project).assume_gpu
    write(project / "pyproject.toml", '[project]\nname = "x"\ndependencies = ["tensorflow-cpu"]\n')
    (project / "requirements.txt").unlink()
    assert not load_config(project).assume_gpu


@pytest.mark.parametrize("text, expected", [
    ('assume-gpu = "yes"', 'assume-gpu in [tool.tfproc-lint] in pyproject.toml: expected true or false (a TOML '
                           'boolean, unquoted), got the string "yes"'),
    ('assume_gpu = 1', "assume-gpu in [tool.tfproc-lint] in pyproject.toml: expected true or false"),
    ('assume-start-method = ["spawn"]', "assume-start-method in [tool.tfproc-lint] in pyproject.toml: expected a "
                                        "string, got an array"),
    ('target-python = 312', "target-python in [tool.tfproc-lint] in pyproject.toml: expected a string, got the "
                            "number 312"),
    ('select = true', "select in [tool.tfproc-lint] in pyproject.toml: expected a list of strings, got the boolean "
                      "true"),
    ('extend-exclude = {dir = "gen"}', "extend-exclude in [tool.tfproc-lint] in pyproject.toml: expected a list of "
                                       "strings, got a table"),
])
def test_a_toml_value_of_the_wrong_type_is_one_line_naming_the_file_and_the_option(
        project, capsys, text, expected) -> None:
    write(project / "pyproject.toml", f"[tool.tfproc-lint]\n{text}\n")
    code, out, err = lint(capsys, ".")
    assert code == 2 and out == ""
    assert err.startswith(f"tfproc-lint: error: {expected}") and err.count("\n") == 1


def test_setup_cfg_takes_configparser_booleans(project) -> None:
    """setup.cfg's values are strings: yes/no, on/off, 1/0 are configparser's booleans."""
    write(project / "setup.cfg", "[tfproc_lint]\nassume-gpu = yes\n")
    assert load_config(project).assume_gpu is True


def test_bad_assume_gpu_names_the_option(project, capsys) -> None:
    write(project / "pyproject.toml", '[tool.tfproc-lint]\nassume-gpu = "maybe"\n')
    code, _, err = lint(capsys, ".")
    assert code == 2 and "assume-gpu in [tool.tfproc-lint] in pyproject.toml: expected true or false" in err


def test_assume_gpu_on_the_command_line_and_under_flake8(project, capsys) -> None:
    write(project / "app.py", GPU_POOL)
    assert lint(capsys, "app.py")[0] == 0
    code, out, _ = lint(capsys, "--assume-gpu", "app.py")
    assert code == 1 and "TFP401" in out and "GPU assumed: --assume-gpu" in out
    assert flake8(project).stdout == ""
    assert "TFP401" in flake8(project, "--tfp-assume-gpu").stdout
    write(project / ".flake8", "[flake8]\ntfp-assume-gpu = true\n")
    assert "TFP401" in flake8(project).stdout


# per-file-ignores --------------------------------------------------------------------------------------
def findings(capsys, *args: str) -> set[tuple[str, str]]:
    """(file, code) of every finding of `check --format json`."""
    import json

    _, out, _ = lint(capsys, "--format", "json", "--no-cache", *args)
    return {(Path(f["path"]).as_posix(), f["code"]) for f in json.loads(out)["findings"]}


def two_bad_files(project: Path) -> None:
    for name in ("tests/test_job.py", "src/pkg/job.py", "src/pkg/__init__.py"):
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(TFP201_BAD, project / name)


def test_per_file_ignores_in_pyproject_as_ruff_writes_them(project, capsys) -> None:
    two_bad_files(project)
    assert {code for _, code in findings(capsys, ".")} == {"TFP201"}
    write(project / "pyproject.toml", """\
        [tool.tfproc-lint]
        [tool.tfproc-lint.per-file-ignores]
        "tests/*" = ["TFP2"]
        "__init__.py" = ["TFP201"]
        """)
    assert findings(capsys, ".") == {("src/pkg/job.py", "TFP201")}
    # off whatever select says (Ruff): a longer select does not bring it back
    assert findings(capsys, ".", "--select", "TFP201") == {("src/pkg/job.py", "TFP201")}
    # patterns are relative to the file that gives them, not to the working directory
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(project / "src")
        assert findings(capsys, "..") == {("../src/pkg/job.py", "TFP201")}


def test_per_file_ignores_in_setup_cfg_in_flake8s_form(project, capsys) -> None:
    two_bad_files(project)
    write(project / "setup.cfg", """\
        [tfproc_lint]
        per-file-ignores =
            tests/*: TFP201, TFP202
            src/**/__init__.py:TFP2 src/pkg/job.py: TFP201
        """)
    assert findings(capsys, ".") == set()
    write(project / "setup.cfg", "[tfproc_lint]\nper-file-ignores = !src/pkg/*: TFP201\n")  # negated: all but src/pkg
    assert findings(capsys, ".") == {("src/pkg/job.py", "TFP201"), ("src/pkg/__init__.py", "TFP201")}


@pytest.mark.parametrize("pattern, path, matched", [
    ("tests/*", "tests/a/b.py", True),          # `*` crosses directories, as in Ruff's globs
    ("**/conftest.py", "conftest.py", True),    # `**/` is zero or more directories
    ("**/conftest.py", "a/b/conftest.py", True),
    ("src/{a,b}.py", "src/b.py", True),
    ("src/{a,b}.py", "src/c.py", False),
    ("src/[!x]*.py", "src/xy.py", False),
    ("job.py", "deep/down/job.py", True),       # a bare name matches the file's name anywhere
    ("src/job.py", "other/src/job.py", False),  # a path is anchored at the configuration's directory
    ("!tests/*", "src/job.py", True),
    ("!tests/*", "tests/job.py", False),
])
def test_per_file_ignore_patterns(tmp_path, pattern, path, matched) -> None:
    tmp_path = tmp_path / "a [b] c*"  # the project's own folder is taken literally, not as a glob
    tmp_path.mkdir()
    config = apply_options(Config(), {"per-file-ignores": {pattern: ["TFP201"]}}, "test", tmp_path)
    resolved = config.for_path(tmp_path / path)
    assert (not resolved.is_enabled("TFP201")) is matched
    assert resolved.is_enabled("TFP101") and resolved.per_file_ignores == ()


def test_per_file_ignores_through_the_engine_and_flake8(project) -> None:
    from tfproc_lint.engine import lint_source

    shutil.copy(TFP201_BAD, project / "app.py")
    source = TFP201_BAD.read_text(encoding="utf-8")
    config = apply_options(Config(), {"per-file-ignores": {"app.py": ["TFP201"]}}, "test", project)
    assert [d.code for d in lint_source(source, "app.py", config)] == []
    assert [d.code for d in lint_source(source, "other.py", config)] == ["TFP201"]
    write(project / "pyproject.toml", '[tool.tfproc-lint.per-file-ignores]\n"app.py" = ["TFP201"]\n')
    assert flake8(project).stdout == ""


@pytest.mark.parametrize("name, text, expected", [
    ("pyproject.toml", '[tool.tfproc-lint]\nper-file-ignores = ["tests/*"]\n',
     "per-file-ignores in [tool.tfproc-lint] in pyproject.toml: expected a table of file patterns to lists of codes"),
    ("pyproject.toml", '[tool.tfproc-lint.per-file-ignores]\n"tests/*" = ["tfp201"]\n',
     "'tfp201' is not a rule code, prefix or name"),
    ("pyproject.toml", '[tool.tfproc-lint.per-file-ignores]\n"tests/*" = []\n',
     "per-file-ignores in [tool.tfproc-lint] in pyproject.toml: 'tests/*' needs a file pattern and at least one code"),
    ("pyproject.toml", '[tool.tfproc-lint.per-file-ignores]\n"tests/*" = ["TFP999"]\n',
     "per-file-ignores in [tool.tfproc-lint] in pyproject.toml: 'TFP999' matches no rule"),
    ("setup.cfg", "[tfproc_lint]\nper-file-ignores = tests/* TFP201\n", "'TFP201' has no `: codes` after it"),
    ("setup.cfg", "[tfproc_lint]\nper-file-ignores = : TFP201\n", "expected `pattern: codes` pairs"),
])
def test_bad_per_file_ignores_name_the_option(project, capsys, name, text, expected) -> None:
    write(project / name, text)
    code, out, err = lint(capsys, ".")
    assert code == 2 and out == "" and expected in err, err


def test_the_documented_unknown_option_error_is_the_real_one(project, capsys) -> None:
    """docs/configuration.md's first error example is what an unknown option prints today (all options listed)."""
    docs = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    documented = next(line for line in docs.splitlines() if "unknown option 'target-pyhton'" in line)
    write(project / "setup.cfg", "[tfproc_lint]\ntarget-pyhton = 3.11\n")
    code, out, err = lint(capsys, ".")
    assert code == 2 and err.strip() == documented


# Start-up: what a check that parses nothing imports ---------------------------------------------------
@pytest.mark.parametrize("specifier", [
    ">=3.10", ">= 3.9", " >=3.8 ", ">=3.10.2", ">=3.10.99", ">=3.10.100", ">=3.10,<4", ">=3.11, <4.0", ">=3.9,<4.0.0",
    ">=3.29", ">=3.30", ">=3.35", ">=3.010", ">=3.10.01", ">=3.7.0", ">=3.10,<3.12", ">=3.10.*", ">=3.10rc1",
    ">=3", ">=2.7", "~=3.10", "==3.10.*", ">3.9", ">=3.10,!=3.10.2", ">=v3.10", "<4,>=3.10",
])
def test_the_plain_lower_bound_reads_as_packaging_reads_it(specifier) -> None:
    """`lowest_python` answers `>=3.X` without importing packaging: the same answer (or error) as
    the SpecifierSet loop for every specifier, those it reads itself and those it leaves to it."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    from tfproc_lint.config import lowest_python

    try:
        spec = SpecifierSet(specifier)
    except InvalidSpecifier:
        with pytest.raises(ConfigError):
            lowest_python(specifier, "here")
        return
    expected = next(((3, minor) for minor in range(30) if spec.contains(f"3.{minor}.99", prereleases=True)
                     or spec.contains(f"3.{minor}", prereleases=True)), None)
    assert lowest_python(specifier, "here") == expected


# Imported only by the runs that need them: packaging (a requires-python other than `>=3.X`), LibCST and
# the engine (a file that passes the pre-filter), the cache, the fix loop, the other output formats,
# worker processes (32 files or more), shutil (argparse asks the terminal width for help only: cli._HelpFormatter).
NOT_AT_START = ("packaging", "libcst", "tfproc_lint.engine", "tfproc_lint.fixing", "tfproc_lint.cache",
                "tfproc_lint.project", "tfproc_lint.output.json_format", "tfproc_lint.output.sarif",
                "tfproc_lint.output.full", "multiprocessing", "concurrent.futures", "hashlib", "json", "shutil")


def test_a_check_of_a_plain_file_imports_only_what_it_uses(project) -> None:
    """A project with `python_requires = >=3.10` in setup.cfg and a pyproject.toml, and one file that
    names neither TensorFlow nor processes: what a pre-commit hook runs on most files. None of
    NOT_AT_START is imported (each was measured at 5-50% of this run's start)."""
    write(project / "setup.cfg", "[metadata]\nname = app\n\n[options]\npython_requires = >=3.10\n")
    write(project / "pyproject.toml", '[build-system]\nrequires = ["setuptools"]\n')
    write(project / "plain.py", "import csv\n\nprint(csv.QUOTE_ALL)\n")
    script = ("import sys; from tfproc_lint.cli import main; code = main(['check', '--no-cache', 'plain.py']); "
              f"print(code, [name for name in {NOT_AT_START!r} if name in sys.modules])")
    completed = processes.run([sys.executable, "-c", script], cwd=project, env=run_env(), capture_output=True,
                              text=True, timeout=60, check=False)
    assert completed.stdout.splitlines()[-1] == "0 []", completed.stdout + completed.stderr


def test_a_check_that_lints_imports_no_writer(project) -> None:
    """A check that lints a file (and checks its fix) writes nothing: the fix loop's atomic writer
    (tempfile, with shutil, random and the compression modules) is imported only to write, and
    no other output format than the one asked for."""
    shutil.copy(TFP201_BAD, project / "app.py")
    unused = ("tempfile", "tfproc_lint.output.json_format", "tfproc_lint.output.sarif", "tfproc_lint.output.full")
    script = ("import sys; from tfproc_lint.cli import main; code = main(['check', '--no-cache', 'app.py']); "
              f"print(code, 'libcst' in sys.modules, [name for name in {unused!r} if name in sys.modules])")
    completed = processes.run([sys.executable, "-c", script], cwd=project, env=run_env(), capture_output=True,
                              text=True, timeout=60, check=False)
    assert completed.stdout.splitlines()[-1] == "1 True []", completed.stdout + completed.stderr


def test_each_setting_of_the_option_table_is_read_into_a_config_field() -> None:
    """tfproc_lint/options.py's settings: a parser for each kind of value, a `Config` field for each
    (or the setting it extends); a flag that is no setting names no field."""
    from dataclasses import fields

    from tfproc_lint.config import PARSERS
    from tfproc_lint.options import CHECK_OPTIONS

    names = {field.name for field in fields(Config)}
    for option in CHECK_OPTIONS:
        if option.value is None:
            assert option.attribute not in names, option.name
        else:
            assert option.value in PARSERS, option.name
            assert (OPTIONS[option.extends] if option.extends else option).attribute in names, option.name
