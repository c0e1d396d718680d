"""The hooks in .pre-commit-hooks.yaml through the real pre-commit, in temporary git repositories.

pre-commit installs a hook repository from a git commit (`try-repo` of a path with uncommitted
changes adds only tracked files), so the tests first commit a snapshot of this working tree, files
not yet added to git included, into a temporary repository (a local clone, as a user's), and
point pre-commit at that. The project's config is the one docs/integrations.md documents, with
that clone's path and HEAD. The hook environments are built by pip from the package index, as for
a user: three builds (try-repo, the two hooks of a config, flake8 with tfproc-lint as
`additional_dependencies`) run at once.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

import processes
from conftest import ROOT, tool

pytestmark = pytest.mark.precommit

BAD = ROOT / "fixtures" / "lint" / "TFP101" / "bad_a3c_session_to_actors.py"
GOOD = ROOT / "fixtures" / "lint" / "TFP101" / "good_a3c_session_to_actors.py"
UNSAFE_FIX = ROOT / "fixtures" / "lint" / "TFP102" / "bad_keras_predict_pool_partial.py"  # TFP102 with an unsafe fix
BAD_NOTEBOOK = ROOT / "fixtures" / "lint" / "TFP204" / "bad_spawn_pool_cell_worker.ipynb"
GOOD_NOTEBOOK = ROOT / "fixtures" / "lint" / "TFP204" / "good_spawn_pool_cell_worker.ipynb"
INSTALL_TIMEOUT = 300
INTEGRATIONS = ROOT / "docs" / "integrations.md"
DOCUMENTED = "<!-- tests/test_precommit.py runs this config"  # marks the yaml block after it
IGNORE = shutil.ignore_patterns(".git", ".venv", "venv", "build", "dist", "*.egg-info", "__pycache__",
                                ".pytest_cache", ".ruff_cache", ".hypothesis", "probe-report")


def git_env() -> dict:
    env = dict(os.environ)
    env.update(GIT_AUTHOR_NAME="tfproc-lint tests", GIT_AUTHOR_EMAIL="tests@example.invalid",
               GIT_COMMITTER_NAME="tfproc-lint tests", GIT_COMMITTER_EMAIL="tests@example.invalid",
               GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", PYTHONUTF8="1")
    env.pop("NO_COLOR", None)
    for variable in ("PRE_COMMIT", "PRE_COMMIT_HOME", "SKIP", "PRE_COMMIT_ALLOW_NO_CONFIG"):
        env.pop(variable, None)
    return env


def git(*args: str, cwd: Path) -> str:
    return processes.run(["git", *args], cwd=cwd, env=git_env(), check=True, capture_output=True,
                         text=True).stdout.strip()


def snapshot(destination: Path) -> str:
    """Commit this working tree (tracked and untracked, not ignored files) into a new repository."""
    listed = processes.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, check=False)
    if listed.returncode == 0:
        for name in filter(None, listed.stdout.decode().split("\0")):
            source = ROOT / name
            if source.is_file():
                (destination / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, destination / name)
    else:  # not a git checkout (an unpacked sdist): copy the tree
        shutil.copytree(ROOT, destination, ignore=IGNORE, dirs_exist_ok=True)
    git("init", "-q", cwd=destination)
    git("add", "-A", cwd=destination)
    git("commit", "-q", "-m", "snapshot", cwd=destination)
    return git("rev-parse", "HEAD", cwd=destination)


def documented_config(repo: Path, rev: str) -> str:
    """docs/integrations.md's `.pre-commit-config.yaml`, its placeholders (`/path/to/tfproc-lint`,
    `COMMIT_SHA`) replaced by a clone and its HEAD, and its commented-out second hook
    (tfproc-lint-fix) turned on: what a user who copies it gets, both hooks in one config."""
    text = INTEGRATIONS.read_text(encoding="utf-8")
    snippet = re.search(r"```yaml\n(.*?)```", text[text.index(DOCUMENTED):], re.DOTALL).group(1)
    config, repos = re.subn(r"(?m)^(\s*- repo: )/path/to/tfproc-lint(?=\s)", rf"\g<1>{repo.as_posix()}", snippet)
    config, revs = re.subn(r"(?m)^(\s*rev: )COMMIT_SHA(?=\s)", rf"\g<1>{rev}", config)
    config, enabled = re.subn(r"(?m)^(\s*)# (- id: tfproc-lint-fix)(?=\s)", r"\1\2", config)
    assert (repos, revs, enabled) == (1, 1, 1), snippet
    return config


class Project:
    def __init__(self, path: Path, home: Path) -> None:
        self.path, self.home = path, home

    def pre_commit(self, *args: str, home: Path | None = None, timeout: int = 120) -> subprocess.CompletedProcess:
        env = git_env()
        env["PRE_COMMIT_HOME"] = str(home or self.home)
        return processes.run([tool("pre-commit"), *args, "--color", "never"], cwd=self.path, env=env,
                             capture_output=True, text=True, timeout=timeout, check=False)

    def stage_only(self, *names: str) -> None:
        git("reset", "-q", cwd=self.path)
        if names:
            git("add", "--", *names, cwd=self.path)


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """A hook repository (the snapshot), a project with a bad and a good file, installed hook environments.

    Yields (project, try-repo result): try-repo runs while the config's environments are installed.
    """
    base = tmp_path_factory.mktemp("precommit")
    hooks_repo = base / "tfproc-lint"
    hooks_repo.mkdir()
    rev = snapshot(hooks_repo)
    project_path = base / "project"
    project_path.mkdir()
    shutil.copy(BAD, project_path / "bad.py")
    shutil.copy(GOOD, project_path / "good.py")
    shutil.copy(UNSAFE_FIX, project_path / "unsafe_fix.py")
    shutil.copy(BAD_NOTEBOOK, project_path / "bad.ipynb")
    shutil.copy(GOOD_NOTEBOOK, project_path / "good.ipynb")
    (project_path / "notes.txt").write_text("not Python\n", encoding="utf-8")
    # Untracked and never staged: a hook that linted the whole directory would report it.
    (project_path / "scratch").mkdir()
    shutil.copy(BAD, project_path / "scratch" / "untracked_bad.py")
    (project_path / ".pre-commit-config.yaml").write_text(documented_config(hooks_repo, rev), encoding="utf-8")
    (project_path / "flake8-config.yaml").write_text(textwrap.dedent(f"""\
        repos:
          - repo: local
            hooks:
              - id: flake8
                name: flake8
                entry: flake8
                language: python
                types: [python]
                require_serial: true
                args: [--select=TFP]
                additional_dependencies: [flake8, "{hooks_repo.as_posix()}"]
        """), encoding="utf-8")
    git("init", "-q", cwd=project_path)
    git("add", "notes.txt", ".pre-commit-config.yaml", "flake8-config.yaml", cwd=project_path)
    git("commit", "-q", "-m", "start", cwd=project_path)  # bad.py and good.py: new files, staged by each test
    project = Project(project_path, base / "pre-commit-home")

    env = git_env()
    flake8_home = base / "flake8-home"
    with processes.started(
            [tool("pre-commit"), "try-repo", str(hooks_repo), "tfproc-lint", "--files", "bad.py", "good.py",
             "--color", "never"],
            cwd=project_path, env=dict(env, PRE_COMMIT_HOME=str(base / "try-repo-home")),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as try_repo, processes.started(
            [tool("pre-commit"), "install-hooks", "--config", "flake8-config.yaml", "--color", "never"],
            cwd=project_path, env=dict(env, PRE_COMMIT_HOME=str(flake8_home)),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as flake8_install:
        installed = project.pre_commit("install-hooks", timeout=INSTALL_TIMEOUT)
        assert installed.returncode == 0, installed.stdout + installed.stderr
        flake8_output, _ = processes.finish(flake8_install, INSTALL_TIMEOUT)
        assert flake8_install.returncode == 0, flake8_output
        try_output, _ = processes.finish(try_repo, INSTALL_TIMEOUT)
    project.flake8_home = flake8_home
    yield project, subprocess.CompletedProcess(try_repo.args, try_repo.returncode, try_output, "")


def test_try_repo_reports_the_bad_file_only(setup) -> None:
    _, result = setup
    assert result.returncode == 1, result.stdout
    assert "tfproc-lint" in result.stdout and "Failed" in result.stdout
    assert "bad.py:52:22: TFP101" in result.stdout
    assert "good.py:" not in result.stdout
    assert "untracked_bad.py" not in result.stdout


def test_check_hook_fails_on_a_staged_bad_file(setup) -> None:
    project, _ = setup
    project.stage_only("bad.py", "good.py")
    result = project.pre_commit("run", "tfproc-lint")
    assert result.returncode == 1, result.stdout
    assert "bad.py:52:22: TFP101" in result.stdout and "good.py:" not in result.stdout
    assert "untracked_bad.py" not in result.stdout


def test_check_hook_fails_on_a_staged_bad_notebook(setup) -> None:
    """`types_or: [python, jupyter]`: staged notebooks are checked, per cell (nbformat comes with the hook)."""
    project, _ = setup
    project.stage_only("bad.ipynb", "good.ipynb")
    result = project.pre_commit("run", "tfproc-lint")
    assert result.returncode == 1, result.stdout
    assert "bad.ipynb:cell 4:4:23: TFP204" in result.stdout
    assert "good.ipynb" not in result.stdout and "nbformat" not in result.stdout
    result = project.pre_commit("run", "tfproc-lint", "--files", "good.ipynb")
    assert result.returncode == 0, result.stdout


def test_check_hook_passes_a_good_file(setup) -> None:
    project, _ = setup
    project.stage_only("good.py")
    result = project.pre_commit("run", "tfproc-lint", "--files", "good.py")
    assert result.returncode == 0, result.stdout
    assert "Passed" in result.stdout


def test_no_python_file_staged_skips_both_hooks(setup) -> None:
    """pre-commit passes file names; with no Python file it skips the hook rather than run it on `.`."""
    project, _ = setup
    (project.path / "notes.txt").write_text("changed\n", encoding="utf-8")
    project.stage_only("notes.txt")
    result = project.pre_commit("run")
    assert result.returncode == 0, result.stdout
    assert result.stdout.count("(no files to check)Skipped") == 2, result.stdout
    project.stage_only()
    git("checkout", "--", "notes.txt", cwd=project.path)
    result = project.pre_commit("run")  # nothing staged at all
    assert result.returncode == 0, result.stdout
    assert result.stdout.count("(no files to check)Skipped") == 2, result.stdout


def test_all_files_lints_tracked_files_only(setup) -> None:
    project, _ = setup
    project.stage_only("bad.py", "good.py")
    result = project.pre_commit("run", "tfproc-lint", "--all-files")
    assert result.returncode == 1
    assert "bad.py:52:22: TFP101" in result.stdout and "untracked_bad.py" not in result.stdout


def test_fix_hook_applies_safe_fixes_only_and_fails_on_what_remains(setup) -> None:
    project, _ = setup
    names = ("bad.py", "good.py", "unsafe_fix.py")
    before = {name: (project.path / name).read_bytes() for name in names}
    result = project.pre_commit("run", "tfproc-lint-fix", "--files", *names)
    assert result.returncode == 1, result.stdout
    assert "bad.py:52:22: TFP101" in result.stdout  # TFP101 has no automatic fix: the finding remains
    assert "unsafe_fix.py:32:49: TFP102" in result.stdout and "[unsafe fix:" in result.stdout
    assert "files were modified by this hook" not in result.stdout
    assert {name: (project.path / name).read_bytes() for name in names} == before  # unsafe fix not applied
    result = project.pre_commit("run", "tfproc-lint-fix", "--files", "good.py")
    assert result.returncode == 0, result.stdout


def test_flake8_hook_with_tfproc_lint_as_additional_dependency(setup) -> None:
    """The flake8 route: tfproc-lint pip-installed into flake8's hook environment, as `additional_dependencies`."""
    project, _ = setup
    result = project.pre_commit("run", "--config", "flake8-config.yaml", "--files", "bad.py", "good.py",
                                home=project.flake8_home)
    assert result.returncode == 1, result.stdout
    assert "bad.py:52:22: TFP101" in result.stdout and "good.py:" not in result.stdout
    result = project.pre_commit("run", "--config", "flake8-config.yaml", "--files", "good.py",
                                home=project.flake8_home)
    assert result.returncode == 0, result.stdout


def test_the_documented_config_names_both_hooks_of_the_clone(tmp_path) -> None:
    import yaml  # pre-commit's own dependency

    config = yaml.safe_load(documented_config(tmp_path / "clone", "a1b2" * 10))
    (repo,) = config["repos"]
    assert (repo["repo"], repo["rev"]) == ((tmp_path / "clone").as_posix(), "a1b2" * 10)
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert [hook["id"] for hook in repo["hooks"]] == [hook["id"] for hook in hooks]


# --with-dependents: a staged module's findings in the files that import it ---------------------------
SHOP_MODELS = '''\
import tensorflow as tf


def load(path):
    return tf.keras.models.load_model(path)
'''
SHOP_REGISTRY = '''\
from shop import models

MODEL_PATH = "ranker.keras"


def describe():
    return f"model at {MODEL_PATH}"


def get_model():
    return models.load(MODEL_PATH)
'''
# The same module, changed to load the model when it is imported.
SHOP_REGISTRY_LOADING = SHOP_REGISTRY.replace('MODEL_PATH = "ranker.keras"\n',
                                              'MODEL_PATH = "ranker.keras"\nMODEL = models.load(MODEL_PATH)\n')
SHOP_LABELS = '''\
from shop import models

LABELS = ["cheap", "dear"]
'''
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
NIGHTLY_FINDING = "scripts/nightly.py:14:10: TFP201"


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    """A hook repository (this tree's snapshot) and a user's project whose script imports a module."""
    base = tmp_path_factory.mktemp("dependents")
    hooks_repo = base / "tfproc-lint"
    hooks_repo.mkdir()
    snapshot(hooks_repo)
    project = base / "shop"
    for name, text in {"pyproject.toml": '[project]\nname = "shop"\nrequires-python = ">=3.10"\n',
                       "shop/__init__.py": "", "shop/models.py": SHOP_MODELS, "shop/registry.py": SHOP_REGISTRY,
                       "shop/labels.py": SHOP_LABELS, "scripts/nightly.py": NIGHTLY}.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text, encoding="utf-8")
    git("init", "-q", cwd=project)
    git("add", "-A", cwd=project)
    git("commit", "-q", "-m", "clean", cwd=project)

    def try_repo(hook: str, timeout: int = INSTALL_TIMEOUT) -> subprocess.CompletedProcess:
        """`pre-commit try-repo` of the hook on the staged files, as a user tries it before adding it."""
        env = dict(git_env(), PRE_COMMIT_HOME=str(base / "pre-commit-home"))
        return processes.run([tool("pre-commit"), "try-repo", str(hooks_repo), hook, "--color", "never"], cwd=project,
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)

    yield project, try_repo


def test_hook_reports_a_staged_modules_finding_in_the_script_that_imports_it(shop) -> None:
    """Only shop/registry.py is staged, changed to load the model at import: scripts/nightly.py,
    which imports it and then forks a pool whose task runs TensorFlow, now hangs; the hook says so."""
    project, try_repo = shop
    clean = try_repo("tfproc-lint", timeout=INSTALL_TIMEOUT)  # installs the hook's environment
    assert "Skipped" in clean.stdout and clean.returncode == 0, clean.stdout  # nothing staged yet
    (project / "shop" / "registry.py").write_text(SHOP_REGISTRY_LOADING, encoding="utf-8")
    git("add", "shop/registry.py", cwd=project)
    result = try_repo("tfproc-lint")
    assert result.returncode == 1, result.stdout
    assert NIGHTLY_FINDING in result.stdout and "imports shop.registry" in result.stdout
    own = [line for line in result.stdout.splitlines() if line.startswith("shop/registry.py:")]
    assert own == [], own  # the module itself has no finding (the script's names its line)
    assert "(--with-dependents): scripts/nightly.py" in result.stdout

    before = (project / "scripts" / "nightly.py").read_bytes()
    fixed = try_repo("tfproc-lint-fix")  # reports the dependent's finding, never edits it
    assert fixed.returncode == 1 and NIGHTLY_FINDING in fixed.stdout, fixed.stdout
    assert "files were modified by this hook" not in fixed.stdout
    assert (project / "scripts" / "nightly.py").read_bytes() == before

    # The near miss: with that change committed, a change to a module the script does not import
    # reports nothing of the script (whose finding is in the tree, not in this commit).
    git("commit", "-q", "-m", "load at import", cwd=project)
    (project / "shop" / "labels.py").write_text(SHOP_LABELS + 'LABELS.append("free")\n', encoding="utf-8")
    git("add", "shop/labels.py", cwd=project)
    unrelated = try_repo("tfproc-lint")
    assert unrelated.returncode == 0 and "Passed" in unrelated.stdout, unrelated.stdout
    assert "nightly" not in unrelated.stdout
