"""CONTRIBUTING.md's rule skeleton, copied into a new rule file, passes the fast loop after its
fixtures are added: a copy of the package gains the file, and pytest runs `tests/test_rules.py` and
`tests/test_fixtures.py -k TFPNNN` there, as a contributor would; the probe's tests then name the
scenario files the new rule still lacks."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import processes
from conftest import ROOT, run_env

CODE_BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)

BAD_FIXTURE = textwrap.dedent("""\
    \"\"\"Square, cube and root a batch of numbers with TensorFlow in worker processes.\"\"\"
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    import tensorflow as tf

    if __name__ == "__main__":
        values = [1.0, 2.0, 3.0]
        with mp.Pool(2) as pool:
            squares = pool.map(lambda x: float(tf.square(x)), values)  # expect: {code}
            cubes = pool.map_async(lambda x: float(tf.pow(x, 3.0)), values).get()  # expect: {code}
        with ProcessPoolExecutor(2) as executor:
            roots = list(executor.map(lambda x: float(tf.sqrt(x)), values))  # expect: {code}
        print(squares, cubes, roots)
    """)

GOOD_FIXTURE = textwrap.dedent("""\
    \"\"\"The same work with module-level functions (and a lambda that stays in the parent).\"\"\"
    import multiprocessing as mp

    import tensorflow as tf


    def square(x):
        return float(tf.square(x))


    if __name__ == "__main__":
        values = sorted([3.0, 1.0, 2.0], key=lambda x: -x)
        with mp.Pool(2) as pool:
            print(pool.map(square, values))
    """)


def skeleton() -> str:
    blocks = [block for block in CODE_BLOCK.findall((ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8"))
              if "(Rule):" in block]
    assert len(blocks) == 1, "CONTRIBUTING.md should have one ```python block with a Rule subclass"
    return blocks[0]


def test_the_skeleton_is_short() -> None:
    assert len(skeleton().splitlines()) <= 55  # with its finding's dataclass


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> tuple[Path, str]:
    """A copy of the package with the skeleton as a new rule file, its lint fixtures, and the tests."""
    source = skeleton()
    code = re.search(r'^    code = "(TFP\d{3})"', source, re.MULTILINE).group(1)
    name = re.search(r'^    name = "([a-z-]+)"', source, re.MULTILINE).group(1)
    checkout = tmp_path_factory.mktemp("checkout")
    for package in ("tfproc_lint", "runtime_probe"):
        shutil.copytree(ROOT / package, checkout / package, ignore=shutil.ignore_patterns("__pycache__"))
    rule_file = checkout / "tfproc_lint" / "rules" / f"{code.lower()}_{name.replace('-', '_')}.py"
    assert not rule_file.exists(), f"{code} is a real rule's code: give the skeleton an unused one"
    rule_file.write_text(source, encoding="utf-8")
    (checkout / "tests").mkdir()
    for helper in ("conftest.py", "expectations.py", "fixture_findings.py", "test_rules.py", "test_fixtures.py",
                   "test_probe_runner.py"):
        shutil.copy(ROOT / "tests" / helper, checkout / "tests" / helper)
    shutil.copy(ROOT / "setup.cfg", checkout / "setup.cfg")  # pytest's settings
    fixtures = checkout / "fixtures" / "lint" / code
    fixtures.mkdir(parents=True)
    (fixtures / "bad_lambda_tasks.py").write_text(BAD_FIXTURE.format(code=code), encoding="utf-8")
    (fixtures / "good_named_task.py").write_text(GOOD_FIXTURE, encoding="utf-8")
    return checkout, code


def pytest_in(checkout: Path, *args: str) -> subprocess.CompletedProcess:
    env = run_env()
    env["PYTHONPATH"] = str(checkout)  # the copy, not the installed package
    return processes.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], cwd=checkout,
                         env=env, capture_output=True, text=True, timeout=600, check=False)


@pytest.mark.slow
def test_contributings_skeleton_in_a_new_file_passes_the_fast_loop(checkout) -> None:
    folder, code = checkout
    completed = pytest_in(folder, "tests/test_rules.py", "tests/test_fixtures.py", "-k", code)
    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-2000:]
    # the rule's contract, its two examples, and its two fixtures twice (as configured, opt-in rules on)
    assert re.search(r"\b7 passed\b", completed.stdout), completed.stdout[-2000:]


@pytest.mark.slow
def test_a_new_rule_without_probe_scenarios_fails_with_a_message_naming_them(checkout) -> None:
    folder, code = checkout
    completed = pytest_in(folder, "tests/test_probe_runner.py", "-k", "each_rule_has_both_kinds")
    assert completed.returncode == 1, completed.stdout[-4000:]
    assert f"{code} needs a probe scenario pair, runtime_probe/scenarios/{code.lower()}_<what>_bad.py" \
        in completed.stdout, completed.stdout[-4000:]
