"""Package scenarios: a folder holding a small project whose entry script carries `PROBE`. The probe
runs the entry in a copy of the folder (its imports resolve there), judges it as a script, and lints
the copy as a project. Tiny packages without TensorFlow (fast)."""

from __future__ import annotations

import textwrap
from pathlib import Path, PurePosixPath

import pytest

from conftest import ROOT

from runtime_probe import catalog, judge, lintloop, runner

ENTRY = '''\
PROBE = {meta!r}
from calc.ops import double
from runtime_probe.support import report

if __name__ == "__main__":
    report(double(21), 42)
'''


def write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return folder


def calc_package(tmp_path: Path, **meta) -> Path:
    meta = {"rule": "TFP999", "kind": "fixed", "timeout": 30, **meta}
    return write(tmp_path / "scenarios" / "calc_pkg", {
        "pyproject.toml": "[project]\nname = 'calc'\n",
        "calc/__init__.py": "",
        "calc/ops.py": "def double(x):\n    return 2 * x\n",
        "main.py": ENTRY.format(meta=meta),
    })


def test_a_folder_is_a_scenario_named_after_it_whose_entry_runs_with_its_imports(tmp_path):
    folder = calc_package(tmp_path)
    (tmp_path / "scenarios" / "single.py").write_text('PROBE = {"rule": "TFP999", "kind": "fixed"}\n')
    found = {s.name: s for s in catalog.discover(tmp_path / "scenarios")}
    assert set(found) == {"calc_pkg", "single"} and found["single"].root is None
    package = found["calc_pkg"]
    assert (package.root, package.path, package.kind) == (folder, folder / "main.py", "fixed")
    obs = runner.run_scenario(package)
    assert (obs.outcome, obs.result["value"], obs.leftovers) == ("ok", 42, [])
    assert judge.check(package, obs, {})[0] == judge.CONFIRMED
    assert not (folder / "calc" / "__pycache__").exists()  # it ran in a copy


def test_the_entry_runs_in_the_copy_not_in_the_scenarios_folder(tmp_path):
    folder = calc_package(tmp_path)
    (folder / "calc" / "ops.py").write_text("import os\n\ndef double(x):\n    return os.getcwd()\n")
    obs = runner.run_scenario(catalog.load(folder))
    assert obs.outcome == "wrong result"
    where = Path(obs.result["value"])
    assert where.name == "calc_pkg" and where != folder and not where.exists()  # the copy, removed afterwards


@pytest.mark.parametrize("files, message", [
    ({"pyproject.toml": "", "a.py": "x = 1\n"}, "exactly one top-level script with PROBE .found none"),
    ({"pyproject.toml": "", "a.py": "PROBE = {}\n", "b.py": "PROBE = {}\n"}, "found a.py, b.py"),
    ({"a.py": 'PROBE = {"rule": "TFP999", "kind": "bad"}\n'}, "needs a project marker"),
    ({"setup.cfg": "", "a.py": 'PROBE = {"rule": "TFP999", "kind": "bad", "lint": ["gone.py"]}\n'},
     "'lint' names files not in the package: gone.py"),
])
def test_a_malformed_package_scenario_is_refused_with_the_reason(tmp_path, files, message):
    with pytest.raises(ValueError, match=message):
        catalog.load(write(tmp_path / "pkg", files))


LATE_ENV = {
    "pyproject.toml": "[project]\nname = 'late'\n",
    "trainer/__init__.py": "",
    "trainer/devices.py": """\
        import tensorflow as tf


        def describe_devices():
            return [device.name for device in tf.config.list_logical_devices()]
        """,
    "trainer/pinned.py": """\
        import os

        import tensorflow as tf

        print(tf.reduce_sum(tf.ones((2, 2))))
        os.environ["CUDA_VISIBLE_DEVICES"] = "0"
        """,
}
LATE_ENV_MAIN = """\
    import os

    from trainer.devices import describe_devices

    PROBE = {meta!r}

    if __name__ == "__main__":
        {first}
        {second}
    """


def late_env(tmp_path: Path, kind: str, first: str, second: str, **meta) -> catalog.Scenario:
    main = LATE_ENV_MAIN.format(meta={"rule": "TFP403", "kind": kind, **meta}, first=first, second=second)
    return catalog.load(write(tmp_path / f"late_{kind}", {**LATE_ENV, "main.py": main}))


def test_the_lint_loop_lints_a_package_as_a_project(tmp_path):
    """The entry is flagged only through the other module (the helper starts the runtime), and the
    files the metadata names are linted too, each finding shown with its file."""
    query, pin = "print(describe_devices())", 'os.environ["CUDA_VISIBLE_DEVICES"] = "0"'
    bad = late_env(tmp_path, "bad", query, pin, lint=["trainer/pinned.py"])
    fixed = late_env(tmp_path, "fixed", pin, query)
    loop = lintloop.run([bad, fixed], tmp_path / "out")
    checks = {(c.scenario, c.requirement): c for c in loop.checks}
    flagged = checks[("late_bad", "flagged TFP403")]
    assert flagged.passed and flagged.detail == "found TFP403@main.py:9, TFP403@trainer/pinned.py:6", flagged.detail
    assert checks[("late_fixed", "lints clean")].passed, checks[("late_fixed", "lints clean")].detail
    assert not list(tmp_path.glob("late_*/**/__pycache__"))


def test_the_auto_fixed_package_keeps_its_modules_and_runs_from_the_output_folder(tmp_path):
    """Where the linter fixes the entry script (the pool built after the other module's model), the fixed
    copy of the whole package is one more scenario; the scenario's own folder stays as it was."""
    entry = '''\
        import multiprocessing as mp

        import tensorflow as tf

        from jobs.model import build

        PROBE = {"rule": "TFP201", "kind": "bad", "expect": {"outcome": "hang"}}


        def work(seed):
            return float(tf.reduce_sum(tf.random.uniform((256, 256), seed=seed)))


        if __name__ == "__main__":
            build().summary()
            with mp.Pool(2) as pool:
                print(pool.map(work, range(4)))
        '''
    folder = write(tmp_path / "forked", {
        "pyproject.toml": "",
        "jobs/__init__.py": "",
        "jobs/model.py": "import tensorflow as tf\n\n\ndef build():\n"
                         "    return tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])\n",
        "jobs/tasks.py": "def unused():\n    return 0\n",
        "main.py": entry,
    })
    loop = lintloop.run([catalog.load(folder)], tmp_path / "out")
    checks = {(c.scenario, c.requirement): c for c in loop.checks}
    assert checks[("forked", "flagged TFP201")].passed, checks[("forked", "flagged TFP201")].detail
    assert checks[("forked", "auto-fix")].passed, checks[("forked", "auto-fix")].detail
    [fixed] = loop.autofixed
    assert fixed.root == tmp_path / "out" / "autofixed" / "forked" and fixed.kind == "auto-fixed"
    assert (fixed.root / "jobs" / "tasks.py").is_file() and fixed.path == fixed.root / "main.py"
    assert 'mp.get_context("spawn").Pool(2)' in fixed.path.read_text(encoding="utf-8")
    assert (folder / "main.py").read_text(encoding="utf-8") == textwrap.dedent(entry)  # the original stays
    assert checks[("forked (auto-fixed)", "no TFP201 left")].passed


def test_the_wheel_ships_every_file_of_the_package_scenarios():
    """setup.cfg's package data for runtime_probe matches each file of each scenario folder (setuptools'
    globs: `*` stays within a folder), so that `tfproc-lint probe` from a wheel finds whole packages."""
    import configparser

    setup = configparser.ConfigParser()
    setup.read(ROOT / "setup.cfg", encoding="utf-8")
    globs = [g.strip() for g in setup["options.package_data"]["runtime_probe"].split(",")]
    base = ROOT / "runtime_probe"
    folders = [s.root for s in catalog.discover() if s.root is not None]
    assert folders
    for folder in folders:
        for path in folder.rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                relative = PurePosixPath(path.relative_to(base).as_posix())
                assert any(len(PurePosixPath(g).parts) == len(relative.parts) and relative.match(g) for g in globs), \
                    relative
