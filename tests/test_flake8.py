"""The real flake8, in a subprocess: our plugin's findings, columns and `# noqa`."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import processes
from conftest import tool

LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>TFP\d{3}) ")


def run_flake8(*args, cwd) -> subprocess.CompletedProcess:
    return processes.run([sys.executable, "-m", "flake8", "--isolated", *args], cwd=cwd,
                         capture_output=True, text=True, check=False, timeout=300)


def parse(output: str) -> set[tuple[str, int, int, str]]:
    found = set()
    for line in output.splitlines():
        match = LINE.match(line)
        if match:
            found.add((match["path"], int(match["line"]), int(match["col"]), match["code"]))
    return found


@pytest.mark.slow
def test_flake8_and_the_cli_agree_on_the_fixtures(root) -> None:
    flake8 = run_flake8("--select", "TFP", "fixtures/lint", cwd=root)
    assert flake8.returncode in (0, 1), flake8.stderr
    cli = processes.run([tool("tfproc-lint"), "check", "fixtures/lint", "--format", "json", "--select", "TFP",
                         "--config", "setup.cfg"], cwd=root, capture_output=True, text=True, check=False)
    document = json.loads(cli.stdout)
    # flake8 reads Python files only; notebooks go through nbqa (tests/test_notebook_nbqa.py).
    from_cli = {(f["path"], f["line"], f["column"], f["code"]) for f in document["findings"] if f["cell"] is None}
    from_flake8 = parse(flake8.stdout)
    # fixture-config headers are read by the test harness only; compare files without them.
    configured = {str(p.relative_to(root)) for p in (root / "fixtures" / "lint").rglob("*.py")
                  if "fixture-config:" in p.read_text(encoding="utf-8")[:300]}
    assert from_flake8, "flake8 reported nothing: is the TFP plugin registered?"
    assert {f for f in from_flake8 if f[0] not in configured} == {f for f in from_cli if f[0] not in configured}


def test_columns_are_one_based_and_point_at_the_expression(tmp_path) -> None:
    source = (
        "import multiprocessing as mp\n"
        "import tensorflow.compat.v1 as tf\n"
        "sess = tf.Session()\n"
        "if __name__ == '__main__': p = mp.get_context('spawn').Process(target=print, args=(sess,))\n"
    )
    (tmp_path / "bad.py").write_text(source)
    result = run_flake8("--select", "TFP", "bad.py", cwd=tmp_path)
    column = source.splitlines()[3].index("sess,") + 1
    assert parse(result.stdout) == {("bad.py", 4, column, "TFP101")}


@pytest.mark.slow
def test_noqa_is_honoured_by_flake8(tmp_path) -> None:
    source = (
        "import multiprocessing as mp\n"
        "import tensorflow.compat.v1 as tf\n"
        "sess = tf.Session()\n"
        "if __name__ == '__main__': mp.get_context('spawn').Process(target=print, args=(sess,))  # noqa: TFP101\n"
        "if __name__ == '__main__': mp.get_context('spawn').Process(target=print, args=(sess,))  # noqa: E501\n"
    )
    (tmp_path / "bad.py").write_text(source)
    result = run_flake8("--select", "TFP", "bad.py", cwd=tmp_path)
    assert {(line, code) for _, line, _, code in parse(result.stdout)} == {(5, "TFP101")}
    disabled = run_flake8("--select", "TFP", "--disable-noqa", "bad.py", cwd=tmp_path)
    assert {line for _, line, _, _ in parse(disabled.stdout)} == {4, 5}


@pytest.mark.slow
def test_plugin_options_reach_the_rules(tmp_path) -> None:
    source = (
        "import multiprocessing as mp\n"
        "import tensorflow as tf\n"
        "def work(x):\n"
        "    return float(tf.reduce_sum(tf.ones((256, 256)) * x))\n"
        "if __name__ == '__main__':\n"
        "    tf.matmul(tf.ones((256, 256)), tf.ones((256, 256)))\n"
        "    with mp.Pool(2) as pool:\n"
        "        pool.map(work, range(4))\n"
    )
    (tmp_path / "fork.py").write_text(source)
    assert {c for *_, c in parse(run_flake8("--select", "TFP", "fork.py", cwd=tmp_path).stdout)} == {"TFP201"}
    spawn = run_flake8("--select", "TFP", "--tfp-assume-start-method", "spawn", "fork.py", cwd=tmp_path)
    assert parse(spawn.stdout) == set()
    py314 = run_flake8("--select", "TFP", "--tfp-target-python", "3.14", "fork.py", cwd=tmp_path)
    assert parse(py314.stdout) == set()


OPT_IN_SOURCE = (
    "import multiprocessing as mp\n"
    "import tensorflow as tf\n"
    "model = None\n"
    "def load():\n"
    "    global model\n"
    "    model = tf.keras.models.load_model('m.keras')\n"
    "def predict_row(row):\n"
    "    return model.predict_on_batch(row[None])[0]\n"
    "if __name__ == '__main__':\n"
    "    with mp.get_context('spawn').Pool(initializer=load) as pool:\n"
    "        print(pool.map(predict_row, rows))\n"
)


@pytest.mark.slow
def test_opt_in_rules_follow_flake8s_selection_like_bugbears_b9(tmp_path) -> None:
    """`--select TFP` stays quiet for TFP302/TFP303; a selector more specific than `TFP` in flake8's
    select or extend-select (command line or config) enables them; flake8's ignore still applies."""
    (tmp_path / "app.py").write_text(OPT_IN_SOURCE)

    def found(*args, isolated=True):
        command = [sys.executable, "-m", "flake8", *(["--isolated"] if isolated else []), *args, "app.py"]
        completed = processes.run(command, cwd=tmp_path, capture_output=True, text=True, check=False, timeout=300)
        assert "Traceback" not in completed.stderr, completed.stderr
        return sorted(code for *_, code in parse(completed.stdout))

    assert found("--select", "TFP") == []
    assert found() == []  # flake8's default selection includes the plugin's TFP prefix
    assert found("--extend-select", "TFP302") == ["TFP302"]
    assert found("--select", "TFP3") == ["TFP302", "TFP303"]
    assert found("--select", "TFP", "--extend-select", "TFP30") == ["TFP302", "TFP303"]
    assert found("--select", "TFP3", "--extend-ignore", "TFP303") == ["TFP302"]
    assert found("--select", "TFP1,TFP303") == ["TFP303"]
    (tmp_path / "setup.cfg").write_text("[flake8]\nselect = TFP\nextend-select = TFP303\n")
    assert found(isolated=False) == ["TFP303"]


def test_the_plugin_freezes_what_the_engine_import_made(tmp_path) -> None:
    """Inside flake8's process, LibCST's objects go to the permanent generation once imported, so
    that flake8's later collections do not scan them again (benchmarks/README.md: most of what the
    plugin cost); flake8's collector settings are left as they were."""
    code = (
        "import ast, gc, sys\n"
        "from tfproc_lint.flake8_plugin import TFProcPlugin\n"
        "source = open(sys.argv[1], encoding='utf-8').read()\n"
        "threshold = gc.get_threshold()\n"
        "assert gc.get_freeze_count() == 0\n"
        "found = list(TFProcPlugin(ast.parse(source), source.splitlines(True), 'job.py').run())\n"
        "assert found and gc.get_freeze_count() > 10000, gc.get_freeze_count()\n"
        "assert gc.isenabled() and gc.get_threshold() == threshold\n"
    )
    one_file = Path(__file__).resolve().parents[1] / "benchmarks" / "one_file.py"  # one TFP201 finding
    done = processes.run([sys.executable, "-c", code, str(one_file)], cwd=tmp_path, capture_output=True, text=True,
                         check=False)
    assert done.returncode == 0, done.stderr[-2000:]
