"""The `tfproc-lint` command: exit codes, output, selection, noqa, rules."""

from __future__ import annotations

import json
import subprocess

import pytest

import processes
from conftest import tool

BAD = (
    "import multiprocessing as mp\n"
    "import tensorflow.compat.v1 as tf\n"
    "sess = tf.Session()\n"
    "if __name__ == '__main__': mp.get_context('spawn').Process(target=print, args=(sess,)).start()\n"
)
GOOD = ("import multiprocessing as mp\nimport tensorflow as tf\n"
        "if __name__ == '__main__': mp.get_context('spawn').Pool(2).map(abs, [1])\n")


def run(*args, cwd) -> subprocess.CompletedProcess:
    return processes.run([tool("tfproc-lint"), *args], cwd=cwd, capture_output=True, text=True,
                         check=False, timeout=120)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "bad.py").write_text(BAD)
    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "also_bad.py").write_text(BAD)
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "generated.py").write_text(BAD)  # excluded by default
    return tmp_path


def test_exit_codes(project) -> None:
    assert run("check", "good.py", cwd=project).returncode == 0
    assert run("check", "bad.py", cwd=project).returncode == 1
    assert run("check", "--select", "TFP2", "bad.py", cwd=project).returncode == 0
    assert run("check", "--format", "xml", "bad.py", cwd=project).returncode == 2
    unsafe_alone = run("check", "--unsafe-fixes", "bad.py", cwd=project)  # as Ruff: shows unsafe fixes as available
    assert unsafe_alone.returncode == 1 and unsafe_alone.stderr == ""
    assert run("frobnicate", cwd=project).returncode == 2
    assert run(cwd=project).returncode == 2


def test_text_output_recurses_and_excludes(project) -> None:
    result = run("check", ".", cwd=project)
    lines = [line for line in result.stdout.splitlines() if "TFP101" in line]
    assert [line.split(":")[0] for line in lines] == ["./bad.py", "./pkg/also_bad.py"]
    assert lines[0].startswith("./bad.py:4:")
    assert result.stdout.splitlines()[-1] == "Found 2 findings."
    result = run("check", ".", "--extend-exclude", "pkg", cwd=project)
    assert result.stdout.count("TFP101") == 1


def test_json_output(project) -> None:
    result = run("check", "bad.py", "good.py", "--format", "json", cwd=project)
    document = json.loads(result.stdout)
    assert document["summary"]["findings"] == 1
    finding = document["findings"][0]
    assert (finding["path"], finding["line"], finding["code"]) == ("bad.py", 4, "TFP101")
    assert finding["column"] == BAD.splitlines()[3].index("sess,") + 1
    assert finding["rule"] == "session-crosses-process"


def test_noqa_in_the_cli(project) -> None:
    (project / "silenced.py").write_text(BAD.replace(".start()\n", ".start()  # noqa: TFP101\n"))
    (project / "other_code.py").write_text(BAD.replace(".start()\n", ".start()  # noqa: E501\n"))
    (project / "bare.py").write_text(BAD.replace(".start()\n", ".start()  # NOQA\n"))
    (project / "mixed.py").write_text(BAD.replace(".start()\n", ".start()  # noqa:E501,TFP101\n"))
    (project / "other_rule.py").write_text(BAD.replace(".start()\n", ".start()  # noqa: TFP201\n"))
    assert run("check", "silenced.py", "bare.py", "mixed.py", cwd=project).returncode == 0
    assert run("check", "other_code.py", cwd=project).returncode == 1
    assert run("check", "other_rule.py", cwd=project).returncode == 1


def test_bad_files_are_reported_and_the_run_goes_on(project) -> None:
    # Python 2 code that passes the pre-filter (files that cannot match are not parsed at all).
    (project / "py2.py").write_text(
        'import tensorflow\nimport multiprocessing\nprint "x"\np = multiprocessing.Pool(2)\n')
    result = run("check", "py2.py", "bad.py", "missing.py", cwd=project)
    assert result.returncode == 1
    assert "TFP101" in result.stdout
    errors = result.stderr.splitlines()
    assert any(line.startswith("tfproc-lint: py2.py: cannot parse as Python 3 (line 3") for line in errors)
    assert "tfproc-lint: missing.py: no such file or directory" in errors
    assert "Traceback" not in result.stderr


def test_config_error_is_a_usage_error(project) -> None:
    (project / "pyproject.toml").write_text("[tool.tfproc-lint]\nselec = ['TFP1']\n")
    result = run("check", "bad.py", cwd=project)
    assert result.returncode == 2
    assert "unknown option 'selec'" in result.stderr


def test_rules_listing() -> None:
    result = processes.run([tool("tfproc-lint"), "rules", "--format", "json"], capture_output=True, text=True,
                           check=True)
    codes = [rule["code"] for rule in json.loads(result.stdout)]
    assert codes == sorted(codes) and "TFP101" in codes and "TFP301" in codes


def test_force_exclude_applies_to_named_files(project) -> None:
    assert run("check", "build/generated.py", cwd=project).returncode == 1
    assert run("check", "--force-exclude", "build/generated.py", cwd=project).returncode == 0
    assert run("check", "--force-exclude", "--extend-exclude", "bad.py", "bad.py", cwd=project).returncode == 0


def test_diff_cannot_be_combined_with_a_format(project) -> None:
    result = run("check", "--diff", "--format", "json", "bad.py", cwd=project)
    assert result.returncode == 2 and "--diff" in result.stderr


def test_a_file_reached_by_several_paths_is_checked_once(tmp_path, monkeypatch) -> None:
    """Overlapping arguments, `..` in a path, a linked directory given as an argument and a
    linked file inside the tree all lead to the same files: each is listed once, under the
    spelling met first; a distinct file with the same name elsewhere is kept."""
    from tfproc_lint.config import Config
    from tfproc_lint.files import collect_files

    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    for name in ("pkg/a.py", "pkg/sub/b.py", "other.py"):
        (tmp_path / name).write_text("x = 1\n")
    (tmp_path / "pkg" / "sub" / "a.py").write_text("y = 2\n")  # same name, another file
    (tmp_path / "pkg" / "sub" / "link_to_a.py").symlink_to("../a.py")
    (tmp_path / "alias").symlink_to("pkg")
    monkeypatch.chdir(tmp_path)
    files, errors = collect_files(["pkg", "pkg/sub/../sub", "alias", "pkg/a.py", "other.py"], Config())
    assert not errors
    assert [f.display for f in files] == ["pkg/a.py", "pkg/sub/a.py", "pkg/sub/b.py", "other.py"]


@pytest.mark.parametrize("columns", ["30", "80", "200"])
def test_help_and_usage_read_as_with_argparses_own_formatter(monkeypatch, columns) -> None:
    """cli._HelpFormatter asks the terminal's width only when it formats (it saves the import of
    shutil at start, tests/test_config.py); what it prints is HelpFormatter's, at any width."""
    import argparse

    from tfproc_lint import cli

    monkeypatch.setenv("COLUMNS", columns)

    def texts() -> list[str]:
        parser = cli.build_parser()
        subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
        return [p.format_help() + p.format_usage() for p in [parser, *subparsers.values()]]

    ours = texts()
    monkeypatch.setattr(cli, "_HelpFormatter", argparse.HelpFormatter)
    assert ours == texts()
    assert len(ours) == 6 and all("usage: tfproc-lint" in text for text in ours)
