"""The probe's guard pass on tiny scripts without TensorFlow: a scenario run under the guard, the rule
codes read from its stderr, the guard verdicts, and the report's guard column (merged runs)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from runtime_probe import catalog, judge, lintloop, report, runner

FAKE_SESSION_POOL = '''
import multiprocessing as mp

class BaseSession:
    def __reduce__(self):
        raise TypeError("cannot pickle 'Graph' object")

BaseSession.__module__ = "tensorflow.python.client.session"

def work(sess):
    return 1

if __name__ == "__main__":
    with mp.get_context("fork").Pool(1) as pool:
        pool.map(work, [BaseSession()])
'''


def scenario(tmp_path: Path, name: str, body: str, rule: str, kind: str) -> catalog.Scenario:
    expect = {"outcome": "ok"} if kind == "fixed" else {"outcome": "exception", "type": "TypeError"}
    meta = {"rule": rule, "kind": kind, "expect": expect, "timeout": 60}
    path = tmp_path / f"{name}.py"
    path.write_text(f"PROBE = {meta!r}\n" + textwrap.dedent(body), encoding="utf-8")
    return catalog.load(path)


def test_guard_codes_are_read_from_the_guards_messages_only():
    stderr = "TFP201 in a comment\nForkAfterStartError: TFP201: an op ran\nGuardWarning: TFP403: set\nTFP201: again"
    assert runner.guard_codes(stderr) == ["TFP201", "TFP403"]


@pytest.mark.slow
def test_a_bad_scenario_run_under_the_guard_is_caught_and_a_fixed_one_is_clean(tmp_path):
    bad = scenario(tmp_path, "bad", FAKE_SESSION_POOL, "TFP101", "bad")
    fixed = scenario(tmp_path, "fixed", "from runtime_probe.support import report\nreport(1, 1)\n", "TFP101", "fixed")
    other = scenario(tmp_path, "other", FAKE_SESSION_POOL, "TFP102", "bad")
    plain = runner.run_scenario(bad)
    assert plain.guard_codes == [] and plain.exc_type == "TypeError"
    observed = {s.name: runner.run_scenario(s, guard=True) for s in (bad, fixed, other)}
    assert observed["bad"].guard_codes == ["TFP101"]
    assert observed["bad"].exc_type == "tfproc_lint.guard.errors.TFP101TypeError"
    assert judge.guard_check(bad, observed["bad"])[0] == judge.GUARD_CAUGHT
    assert judge.guard_check(fixed, observed["fixed"])[0] == judge.GUARD_CLEAN
    assert judge.guard_check(other, observed["other"])[0] == "other rule"

    base = report.build([bad, fixed, other], {}, {s.name: "not run (guard pass only)" for s in (bad, fixed, other)},
                        lintloop.LintLoop(status="not run"), None, 0, 0.0, "first")
    report.add_guard(base, [bad, fixed], observed, {}, "guard run 1", 1.0)
    report.add_guard(base, [other], observed, {}, "guard run 2", 2.0)
    assert [run["command"] for run in base["guard"]["runs"]] == ["guard run 1", "guard run 2"]
    assert base["rules"]["TFP101"]["guard"] == "bad 1/1 caught, fixed 1/1 clean"
    assert base["rules"]["TFP102"]["guard"] == "bad 0/1 caught"
    text = report.markdown(base)
    assert "| rule | runtime | scenarios | lint | auto-fix | guard |" in text
    assert "| bad | " in text and "caught (TFP101: exception after" in text
    assert "`guard run 1`" in text and "`guard run 2`" in text


@pytest.mark.slow
def test_a_missed_hang_is_not_caught(tmp_path):
    bad = scenario(tmp_path, "sleepy", "import time\ntime.sleep(60)\n", "TFP201", "bad")
    obs = runner.run_scenario(bad, guard=True, timeout=3, idle_s=None)
    assert obs.outcome == "hang"
    assert judge.guard_check(bad, obs)[0] == "missed"


def test_a_costly_pattern_is_caught_by_a_warning_only_when_the_run_still_ends_ok(tmp_path):
    meta = {"rule": "TFP301", "kind": "bad", "timeout": 60,
            "expect": {"outcome": "ok", "slower_than": {"scenario": "twin", "factor": 3}}}
    path = tmp_path / "slow_bad.py"
    path.write_text(f"PROBE = {meta!r}\n", encoding="utf-8")
    slow = catalog.load(path)
    warned = runner.Observation("ok", 12.0, returncode=0, guard_codes=["TFP301"])
    assert judge.guard_check(slow, warned) == (judge.GUARD_CAUGHT, "TFP301: warning, ok in 12 s")
    broken = runner.Observation("exception", 12.0, returncode=1, exc_type="RuntimeError", message="x",
                                where="parent", guard_codes=["TFP301"])
    assert judge.guard_check(slow, broken)[0] == "named, run changed"
    assert judge.guard_check(slow, runner.Observation("ok", 12.0, returncode=0))[0] == "missed"


def test_the_guard_only_command_merges_its_rows_into_the_report(tmp_path, monkeypatch):
    from runtime_probe import cli

    ran = []

    def run_all(scenarios, **options):  # stands in for running TensorFlow scenarios under the guard
        ran.extend(s.name for s in scenarios)
        assert options["guard"] is True
        return {s.name: runner.Observation("ok", 3.0, returncode=0) for s in scenarios}

    monkeypatch.setattr(runner, "run_all", run_all)
    code = cli.main(["--guard-only", "--scenarios", "tfp303_chunked_pool_fixed", "--output", str(tmp_path),
                     "--progress"])
    assert code == 0 and ran == ["tfp303_chunked_pool_fixed"]
    text = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "| tfp303_chunked_pool_fixed | fixed |" in text and "clean (ok in 3 s)" in text
