"""The wheel as a user gets it: built from a copy of this working tree (tracked and untracked files,
links kept as links) by pip with the installed setuptools and wheel, offline, then unpacked and
imported on its own, away from this checkout."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import zipfile
from pathlib import Path

import pytest
import processes
from conftest import ROOT

# https://www.apache.org/licenses/LICENSE-2.0.txt byte for byte (the file absl-py and tornado ship).
APACHE_2_SHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"


def copy_tree(destination: Path) -> None:
    """This working tree's files as git sees them (not the ignored ones), links copied as links."""
    listed = processes.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, check=True)
    for name in filter(None, listed.stdout.decode().split("\0")):
        source = ROOT / name
        if source.is_symlink() or source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name, follow_symlinks=False)


def pip_wheel(requirement: str, destination: Path) -> Path:
    """`pip wheel` offline, with the installed setuptools and wheel (the test extra)."""
    built = processes.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                           "--disable-pip-version-check", "-q", "-w", str(destination), requirement],
                          capture_output=True, text=True, timeout=300, check=False)
    assert built.returncode == 0, built.stdout + built.stderr
    (found,) = destination.glob("tfproc_lint-*.whl")
    return found


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("wheel")
    copy_tree(base / "tree")
    return pip_wheel(str(base / "tree"), base / "dist")


@pytest.mark.slow
def test_the_license_is_the_apache_text_and_the_wheel_carries_it(wheel) -> None:
    license_text = (ROOT / "LICENSE").read_bytes()
    assert hashlib.sha256(license_text).hexdigest() == APACHE_2_SHA256
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        licenses = [name for name in names if ".dist-info/" in name and name.endswith("LICENSE")]
        assert len(licenses) == 1, names
        assert archive.read(licenses[0]) == license_text
        metadata = archive.read(next(name for name in names if name.endswith(".dist-info/METADATA"))).decode()
    assert "License: Apache-2.0" in metadata and "License-File: LICENSE" in metadata


@pytest.mark.slow
def test_explain_from_the_wheel_prints_the_repositorys_pages_evidence_included(wheel, tmp_path) -> None:
    """The pages' Evidence section quotes the probe's observations (docs/probe/evidence.json); the
    wheel carries them as package data, so an installed `explain` prints each page as committed."""
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    assert json.loads((site / "tfproc_lint" / "probe_evidence.json").read_text(encoding="utf-8")) == json.loads(
        (ROOT / "docs" / "probe" / "evidence.json").read_text(encoding="utf-8"))
    script = """if True:
        import contextlib, io, json, sys
        import tfproc_lint
        from tfproc_lint.cli import main
        from tfproc_lint.rules import rule_codes

        pages = {"module": tfproc_lint.__file__}
        for code in rule_codes():
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                assert main(["explain", code]) == 0
            pages[code] = out.getvalue()
        print(json.dumps(pages))
        """
    env = dict(os.environ, PYTHONPATH=str(site))
    completed = processes.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=120, check=False)
    assert completed.returncode == 0, completed.stderr
    pages = json.loads(completed.stdout)
    assert Path(pages.pop("module")).is_relative_to(site)  # the wheel's code, not this checkout's
    assert len(pages) == len(list((ROOT / "docs" / "rules").glob("TFP*.md")))
    for code, text in pages.items():
        assert "| scenario | expected | observed | verdict |" in text, code
        assert text == (ROOT / "docs" / "rules" / f"{code}.md").read_text(encoding="utf-8"), code


def test_install_hints_name_the_extras_requirements() -> None:
    """Without a release, `pip install 'tfproc-lint[server]'` fails: the messages name the extras'
    own requirements, which must be setup.cfg's."""
    import configparser

    from tfproc_lint.cli import SERVER_INSTALL
    from tfproc_lint.notebook import NBFORMAT_INSTALL

    extras = configparser.ConfigParser()
    extras.read(ROOT / "setup.cfg", encoding="utf-8")

    def requirements(extra: str) -> set[str]:
        return {line.strip() for line in extras["options.extras_require"][extra].splitlines() if line.strip()}

    assert {f"'{requirement}'" for requirement in requirements("server")} == set(SERVER_INSTALL.split()[2:])
    assert NBFORMAT_INSTALL.startswith(f"pip install '{requirements('notebook').pop()}' ")


@pytest.mark.slow
def test_the_readmes_git_url_form_installs_a_commit_of_a_clone(tmp_path) -> None:
    """README's `pip install 'tfproc-lint[server] @ git+file://localhost/path/to/tfproc-lint@COMMIT_SHA'`,
    with a clone of this tree and its HEAD (pip clones it and builds that commit)."""
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (requirement,) = re.findall(
        r"^pip install '(tfproc-lint\S* @ git\+file://localhost/path/to/tfproc-lint@COMMIT_SHA)'", readme, re.MULTILINE)
    clone = tmp_path / "tfproc-lint"
    copy_tree(clone)
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.invalid", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.invalid", GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "clone"]):
        processes.run(["git", *command], cwd=clone, env=env, check=True, capture_output=True)
    sha = processes.run(["git", "rev-parse", "HEAD"], cwd=clone, check=True, capture_output=True,
                        text=True).stdout.strip()
    (clone / "setup.cfg").write_text("not the commit\n", encoding="utf-8")  # pip must build the commit, not the files
    built = pip_wheel(requirement.replace("/path/to/tfproc-lint", clone.as_posix()).replace("COMMIT_SHA", sha),
                      tmp_path / "dist")
    with zipfile.ZipFile(built) as archive:
        assert "tfproc_lint/cli.py" in archive.namelist()
