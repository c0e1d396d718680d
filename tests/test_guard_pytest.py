"""The guard's pytest plugin in real pytest runs (a subprocess each, in a folder of its own): registered
through the `pytest11` entry point, inert without `--tfproc-guard` or `tfproc_guard = true`, and with
it a test that forks after TensorFlow started fails with TFP201 instead of hanging the suite."""

from __future__ import annotations

import sys
import textwrap

import pytest

import processes
from conftest import run_env

CHECK = """
import tfproc_lint.guard

def test_state():
    print("guard installed:", tfproc_lint.guard.installed())
"""


def run_pytest(tmp_path, tests: str, *args: str, ini: str = "", timeout: float = 120):
    (tmp_path / "test_it.py").write_text(textwrap.dedent(tests), encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\n" + ini, encoding="utf-8")
    env = run_env()
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    return processes.run([sys.executable, "-m", "pytest", "-s", "-p", "no:cacheprovider", *args], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=timeout)


@pytest.mark.slow
def test_registered_and_inert_without_the_option(tmp_path):
    proc = run_pytest(tmp_path, CHECK)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "guard installed: False" in proc.stdout
    assert "tfproc-guard: on" not in proc.stdout
    proc = run_pytest(tmp_path, CHECK, "--help")
    assert "--tfproc-guard" in proc.stdout


@pytest.mark.slow
@pytest.mark.parametrize(("args", "ini"), [(["--tfproc-guard"], ""), ([], "tfproc_guard = true\n")])
def test_the_option_or_the_ini_setting_installs_it(tmp_path, args, ini):
    proc = run_pytest(tmp_path, CHECK, *args, ini=ini)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "guard installed: True" in proc.stdout
    assert "tfproc-guard: on" in proc.stdout


@pytest.mark.slow
def test_the_failure_is_shown_at_the_tests_line_not_in_the_guards_signal_handler(tmp_path):
    # A fork worker that cannot rebuild a (stand-in) Keras object: the guard raises TFP102 in the waiting test.
    proc = run_pytest(tmp_path, """
        import multiprocessing as mp

        def rebuild():
            raise ValueError("keras: cannot rebuild layer Custom")

        class Model:
            def __reduce__(self):
                return rebuild, ()

        def score(model):
            return 1

        def test_pool():
            with mp.get_context("fork").Pool(1) as pool:
                assert pool.map(score, [Model()])
    """, "--tfproc-guard", "-q", "-p", "no:faulthandler")
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    lines = (tmp_path / "test_it.py").read_text(encoding="utf-8").splitlines()
    line = next(n for n, text in enumerate(lines, start=1) if "pool.map(score" in text)
    assert f"test_it.py:{line}: TFP102Error" in out  # the failing frame: the test's own line
    shown = out.split("=== FAILURES ===")[1].split("Captured stderr")[0]
    assert ">           assert pool.map(score, [Model()])" in shown
    assert "E           tfproc_lint.guard.errors.TFP102Error: TFP102: worker process" in shown
    assert "alarm.py" not in shown and "_on_signal" not in shown and "threading.py" not in shown


@pytest.mark.tensorflow
def test_a_test_that_forks_after_tensorflow_started_fails_with_tfp201(tmp_path):
    pytest.importorskip("tensorflow")
    proc = run_pytest(tmp_path, """
        import multiprocessing as mp

        import numpy as np
        import tensorflow as tf

        def tf_sum(seed):
            m = tf.constant(np.ones((256, 256), dtype=np.float32))
            return float(tf.reduce_sum(tf.matmul(m, m)))

        def numpy_sum(seed):
            return float(np.ones((4, 4)).sum())

        def test_model_then_fork_pool():
            assert float(tf.reduce_sum(tf.constant([1.0, 2.0]))) == 3.0
            with mp.get_context("fork").Pool(2) as pool:
                assert pool.map(tf_sum, [1, 2])

        def test_numpy_children_are_fine():
            with mp.get_context("fork").Pool(2) as pool:
                assert pool.map(numpy_sum, [1, 2]) == [16.0, 16.0]

        def test_forked_again_in_a_later_test():
            with mp.get_context("fork").Pool(2) as pool:
                assert pool.map(tf_sum, [3, 4])
    """, "--tfproc-guard", "-q", timeout=600)
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert "2 failed, 1 passed" in out
    assert out.count("TFP201: an op ran in process") >= 2
    lines = (tmp_path / "test_it.py").read_text(encoding="utf-8").splitlines()
    start = next(n for n, line in enumerate(lines, start=1) if "tf.constant([1.0, 2.0])" in line)
    assert f"test_it.py:{start} in test_model_then_fork_pool" in out  # where the runtime started
