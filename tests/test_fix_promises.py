"""A fix is a promise (issue 18): no rewrite hides a finding it did not fix, a round of several
fixes is checked as a whole, and every mode of the command line gives the same counts. The
promises checked on every fixture and probe scenario: tests/test_fix_contract.py."""

from __future__ import annotations

import subprocess
from collections import Counter
from pathlib import Path

import libcst as cst
import pytest

import processes
from conftest import tool
from tfproc_lint.analysis.file_analysis import FileAnalysis
from tfproc_lint.config import Config
from tfproc_lint.engine import _checked_fix, lint_source
from tfproc_lint.fixes.base import FixBuilder
from tfproc_lint.fixing import finding_key, fix_source, plan_source
from tfproc_lint.rules.base import Report, all_rules

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "fixtures" / "fix"


def test_two_tasks_of_one_pool_are_fixed_together_or_not_at_all() -> None:
    """Fixing the first task's build with an initializer used to make the pool look fixed and hid
    the second task's build ("No findings (fixed 1)"). Tasks that build the same thing share one
    new initializer (fixtures/fix/TFP301/two_tasks_one_pool.out.py); different builds are refused."""
    together = FIX / "TFP301" / "two_tasks_one_pool.in.py"
    source = together.read_text(encoding="utf-8")
    listed = plan_source(source, str(together))
    assert [d.code for d in listed] == ["TFP301", "TFP301"]
    assert all(d.fix is not None and d.fix.title.endswith("shared by `label`, `confidence`") for d in listed)
    outcome = fix_source(source, str(together), unsafe=True)
    assert len(outcome.applied) == 2 and outcome.remaining == []
    apart = FIX / "TFP301" / "manual_two_tasks_build_different_models.in.py"
    source = apart.read_text(encoding="utf-8")
    listed = plan_source(source, str(apart))
    assert [d.code for d in listed] == ["TFP301", "TFP301"]
    assert all(d.fix is None and "build different state on every task" in d.full_message for d in listed)
    outcome = fix_source(source, str(apart), unsafe=True)
    assert outcome.source == source and not outcome.applied and len(outcome.remaining) == 2


def test_a_pool_initializer_is_no_proof_that_tasks_stopped_building() -> None:
    path = ROOT / "fixtures" / "lint" / "TFP301" / "bad_initializer_does_not_build.py"
    assert [d.code for d in lint_source(path.read_text(encoding="utf-8"), str(path))] == ["TFP301"]
    manual = FIX / "TFP301" / "manual_pool_has_initializer.in.py"
    (finding,) = plan_source(manual.read_text(encoding="utf-8"), str(manual))
    assert finding.fix is None and "the pool has an initializer already (`pin_gpu`)" in finding.full_message


def test_settings_in_a_task_run_after_the_pool_initializer() -> None:
    path = ROOT / "fixtures" / "lint" / "TFP403" / "bad_task_sets_device_after_initializer.py"
    found = {(d.line, d.code) for d in lint_source(path.read_text(encoding="utf-8"), str(path))}
    assert found == {(18, "TFP403"), (19, "TFP402")}


TASK_SETS_DEVICE_AFTER_LOAD = '''\
import multiprocessing as mp
import os

import tensorflow as tf


def predict(row):
    model = tf.keras.models.load_model("model.keras")
    os.environ["CUDA_VISIBLE_DEVICES"] = str(int(row[0]) % 2)
    return model.predict(row[None], verbose=0)[0]


if __name__ == "__main__":
    with mp.get_context("spawn").Pool(2) as pool:
        print(pool.map(predict, [[0.0] * 4] * 100))
'''


def test_two_fixes_of_one_round_cannot_undo_each_other() -> None:
    """TFP403's fix moves the setting above the load; TFP301's moves the load into a new
    initializer. Applied together they put the load before the setting again, which `--fix`
    used to count as two fixes while TFP403 was still there."""
    outcome = fix_source(TASK_SETS_DEVICE_AFTER_LOAD, "job.py", unsafe=True)
    before = Counter(finding_key(d) for d in lint_source(TASK_SETS_DEVICE_AFTER_LOAD, "job.py"))
    after = Counter(finding_key(d) for d in outcome.remaining)
    assert before - Counter(finding_key(d) for d in outcome.applied) == after
    # the setting moves above the load; the load then cannot move into an initializer, which
    # would run before the setting again
    assert [d.code for d in outcome.applied] == ["TFP403"]
    assert [(d.code, d.fix) for d in outcome.remaining] == [("TFP301", None)]
    listed = plan_source(TASK_SETS_DEVICE_AFTER_LOAD, "job.py")
    assert sum(d.fix is not None for d in listed) == len(outcome.applied)


class _DeleteStatements(FixBuilder):
    """A rewrite that deletes its finding's statement and another one: it hides the other."""

    title = "delete statements"

    def __init__(self, *statements) -> None:
        self.statements = statements

    def plan(self, analysis):
        return {statement: lambda updated: cst.RemovalSentinel.REMOVE for statement in self.statements}


def test_a_rewrite_that_hides_another_finding_is_withdrawn() -> None:
    source = (
        "import os\nimport tensorflow as tf\n\n"
        "def main():\n"
        "    total = tf.reduce_sum(tf.ones((256, 256)))\n"
        "    os.environ['TF_NUM_INTRAOP_THREADS'] = '1'\n"
        "    os.environ['CUDA_VISIBLE_DEVICES'] = '1'\n"
        "    print(float(total))\n\n"
        "if __name__ == '__main__':\n"
        "    main()\n"
    )
    module = cst.parse_module(source)
    analysis = FileAnalysis(module, "job.py", Config())
    rule = next(r for r in all_rules() if r.code == "TFP403")()
    reports = list(rule.check_file(analysis))
    assert len(reports) == 2
    own, other = (next(s for s in module.body[2].body.body if word in module.code_for_node(s))
                  for word in ("INTRAOP", "CUDA"))
    hiding = Report(reports[0].node, reports[0].finding, fix=_DeleteStatements(own, other))
    before = [(("TFP403", r.finding.key()), r) for r in (hiding, reports[1])]
    fix, refusal = _checked_fix(hiding, rule, analysis, source, before, fix_edits=True, verify_fixes=True)
    assert fix is None
    assert refusal == "the rewrite would hide TFP403 on line 7 without fixing it"


def _run(*args, cwd) -> subprocess.CompletedProcess:
    return processes.run([tool("tfproc-lint"), *args], cwd=cwd, capture_output=True, text=True, check=False,
                         timeout=180)


@pytest.mark.slow
def test_every_mode_gives_the_same_counts(tmp_path) -> None:
    """One safe and one unsafe fix (TFP402 and TFP301), plus a finding with no fix."""
    (tmp_path / "job.py").write_text(
        "import multiprocessing as mp\n"
        "import tensorflow as tf\n\n"
        "def predict(row):\n"
        "    model = tf.keras.models.load_model('model.keras')\n"
        "    return model.predict(row[None], verbose=0)[0]\n\n"
        "def norm(seed):\n"
        "    return float(tf.norm(tf.random.normal((512, 512), seed=seed)))\n\n"
        "def main():\n"
        "    total = tf.reduce_sum(tf.ones((256, 256)))\n"
        "    tf.config.threading.set_intra_op_parallelism_threads(1)\n"
        "    print(float(total))\n"
        "    with mp.get_context('spawn').Pool(2) as pool:\n"
        "        print(pool.map(predict, [[0.0] * 4] * 100))\n"
        "    with mp.get_context('fork').Pool(2) as pool:\n"
        "        print(pool.map(norm, range(4)))\n\n"
        "if __name__ == '__main__':\n"
        "    main()\n", encoding="utf-8")
    check = _run("check", "job.py", cwd=tmp_path)
    summary = check.stdout.splitlines()[-1]
    assert summary == "Found 3 findings (1 fixable with --fix, 2 with --fix --unsafe-fixes).", check.stdout
    assert _run("check", "job.py", "--unsafe-fixes", cwd=tmp_path).stdout.splitlines()[-1] == \
        "Found 3 findings (2 fixable with --fix --unsafe-fixes)."
    assert _run("check", "job.py", "--diff", cwd=tmp_path).stderr == \
        "1 fix would be applied (2 with --unsafe-fixes); 1 finding has no fix (manual edit required).\n"
    assert _run("check", "job.py", "--diff", "--unsafe-fixes", cwd=tmp_path).stderr == \
        "2 fixes would be applied; 1 finding has no fix (manual edit required).\n"
    fixed = _run("check", "job.py", "--fix", cwd=tmp_path)
    assert fixed.stdout.splitlines()[-1] == "Found 2 findings (fixed 1; 1 more fixable with --fix --unsafe-fixes).", \
        fixed.stdout
    unsafe = _run("check", "job.py", "--fix", "--unsafe-fixes", cwd=tmp_path)
    assert unsafe.stdout.splitlines()[-1] == "Found 1 finding (fixed 1).", unsafe.stdout
