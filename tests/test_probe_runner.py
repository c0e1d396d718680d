"""The probe's runner, classifier and judge on tiny scripts without TensorFlow (fast)."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import psutil
import pytest

from runtime_probe import catalog, clock, judge, lintloop, process, report, runner, tracebacks
from runtime_probe.process import execute
from tfproc_lint.rules.base import all_rules

REPORT = "from runtime_probe.support import report\n"


def scenario(tmp_path: Path, body: str, expect: dict | None = None, timeout: float = 30) -> catalog.Scenario:
    meta = {"rule": "TFP999", "kind": "bad", "expect": expect or {"outcome": "ok"}, "timeout": timeout}
    path = tmp_path / "case.py"
    path.write_text(f"PROBE = {meta!r}\n" + textwrap.dedent(body), encoding="utf-8")
    return catalog.load(path)


def run(tmp_path: Path, body: str, **options) -> runner.Observation:
    return runner.run_scenario(scenario(tmp_path, body), **options)


def test_ok_and_wrong_result(tmp_path):
    assert run(tmp_path, REPORT + "report([1.0, 2.0], [1.0, 2.00001])").outcome == "ok"
    obs = run(tmp_path, REPORT + "report(3, 4)")
    assert obs.outcome == "wrong result"
    assert obs.result["value"] == 3


def test_exception_in_parent(tmp_path):
    obs = run(tmp_path, "raise ValueError('boom in parent')")
    assert (obs.outcome, obs.exc_type, obs.where) == ("exception", "ValueError", "parent")
    assert obs.message == "boom in parent"


def test_exception_in_pool_worker_is_reraised_with_its_origin(tmp_path):
    obs = run(tmp_path, """
        import multiprocessing as mp

        def work(x):
            raise KeyError(f"bad task {x}")

        if __name__ == "__main__":
            with mp.Pool(2) as pool:
                pool.map(work, [1])
    """)
    assert (obs.outcome, obs.exc_type, obs.where) == ("exception", "KeyError", "worker")
    assert "bad task 1" in obs.message


def test_executor_pickling_error_is_raised_in_the_parent(tmp_path):
    # The executor wraps its feeder thread's error in a _RemoteTraceback too: still the parent.
    obs = run(tmp_path, """
        import threading
        from concurrent.futures import ProcessPoolExecutor

        def work(lock):
            return 1

        if __name__ == "__main__":
            with ProcessPoolExecutor(1) as executor:
                executor.submit(work, threading.Lock()).result()
    """)
    assert (obs.outcome, obs.exc_type, obs.where) == ("exception", "TypeError", "parent")
    assert "cannot pickle" in obs.message


def test_exception_in_process_child_while_parent_exits_cleanly(tmp_path):
    obs = run(tmp_path, """
        import multiprocessing as mp

        def work():
            raise RuntimeError("child failed")

        if __name__ == "__main__":
            p = mp.Process(target=work)
            p.start()
            p.join()
    """)
    assert (obs.outcome, obs.exc_type, obs.where) == ("exception", "RuntimeError", "worker")
    assert obs.message == "child failed"


def _alive_with_marker(marker: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline", "status"]):
        if marker in " ".join(proc.info["cmdline"] or ()) and proc.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(proc)
    return found


@pytest.mark.slow
def test_idle_hang_is_killed_with_its_whole_group(tmp_path):
    obs = run(tmp_path, """
        import multiprocessing as mp
        import time

        def sleep_forever():
            time.sleep(10_000)

        if __name__ == "__main__":
            workers = [mp.Process(target=sleep_forever) for _ in range(2)]
            for w in workers:
                w.start()
            for w in workers:
                w.join()
    """, idle_s=2)
    assert obs.outcome == "hang"
    assert "no CPU" in obs.detail
    assert obs.leftovers == []
    assert _alive_with_marker(str(tmp_path)) == []  # forked workers share the script's command line


@pytest.mark.slow
def test_busy_hang_stops_at_the_time_limit(tmp_path):
    obs = run(tmp_path, "while True:\n    pass\n", timeout=3, idle_s=2)
    assert obs.outcome == "hang"
    assert "time limit" in obs.detail
    assert 3 <= obs.duration_s < 3 * process.MAX_STRETCH + 5  # the limit stretches with the machine's load


# A busy machine: time counts as the run had the CPU, and a slow exit after the result is not a hang -------------
@pytest.mark.slow
def test_a_slow_exit_after_the_result_is_not_a_hang(tmp_path):
    """What made `make test` fail on a loaded machine: the result line came near the limit, then
    the interpreter's teardown (about a second of CPU with TensorFlow loaded, several seconds of wall
    time at a load of 8 on 2 cores) ran past it. Here the teardown is an exit handler using 3 s of CPU,
    past the 2 s limit."""
    obs = run(tmp_path, """
        import atexit
        import time
        from runtime_probe.support import report

        def teardown():
            end = time.process_time() + 3
            while time.process_time() < end:
                pass

        atexit.register(teardown)
        report(1, 1)
    """, timeout=2, idle_s=2)
    assert obs.outcome == "ok", obs.summary()
    assert obs.exit_s is not None and obs.exit_s > 0  # measured: from the result line to the exit


@pytest.mark.slow
def test_a_result_without_an_exit_is_still_a_hang(tmp_path):
    """The other side: the result is printed, then the process waits for ever (a child never
    joined): it is killed once idle, and called a hang that printed its result."""
    obs = run(tmp_path, """
        import threading
        import time
        from runtime_probe.support import report

        report(1, 1)
        threading.Thread(target=time.sleep, args=(10_000,)).start()  # not a daemon: exit waits for it
    """, timeout=60, idle_s=2)
    assert obs.outcome == "hang"
    assert obs.detail.startswith("result printed but the process did not exit; no CPU used")
    assert obs.leftovers == []


def test_limits_before_and_after_the_result_line():
    why = process._why_stop  # (wall s, counted s, limit, (wall, counted) at the result line or None, idle)
    assert why(100, 59, 60, None, False) is None  # slowed down by load: 59 of its 60 s counted
    assert why(100, 61, 60, None, False) == "timeout"
    assert why(60 * process.MAX_STRETCH + 1, 10, 60, None, False) == "timeout"  # the stretch has a bound
    assert why(100, 70, 60, (90, 55), False) is None  # past the limit, but exiting after its result
    assert why(200, 55 + process.EXIT_LIMIT_S + 1, 60, (90, 55), False) == "exit"
    assert why(100, 70, 60, (90, 55), True) == "idle"
    assert why(10, 5, 60, None, True) == "idle"


def test_counted_time_is_wall_time_shrunk_by_the_share_spent_queued_for_a_cpu():
    assert clock.step(1.0, run_ns=200, queued_ns=800) == pytest.approx(0.2)
    assert clock.step(1.0, run_ns=500, queued_ns=0) == 1.0  # a quiet machine
    assert clock.step(1.0, run_ns=0, queued_ns=0) == 1.0  # all asleep: a sleep is not slowed by load


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/schedstat"),
                    reason="no scheduler statistics here (Linux /proc): time counts as wall time")
def test_a_run_slowed_by_contention_for_the_cpus_gets_its_limit_stretched(tmp_path):
    """Three busy processes per CPU, each needing 1 s of CPU: about 3 s of wall time, about 1 s of
    it counted (each had a third of a CPU). The 2 s limit is not reached; a fixed 2 s of wall time was.
    The contention comes from the run's own processes here; other programs on the machine queue its
    threads the same way."""
    cpus = len(os.sched_getaffinity(0))
    obs = run(tmp_path, f"""
        import multiprocessing as mp
        import time
        from runtime_probe.support import report

        def burn(_):
            end = time.process_time() + 1
            while time.process_time() < end:
                pass

        if __name__ == "__main__":
            with mp.Pool({3 * cpus}) as pool:
                pool.map(burn, range({3 * cpus}), chunksize=1)
            report(1, 1)
    """, timeout=2, idle_s=2)
    assert obs.outcome == "ok", obs.summary()
    assert obs.stretch > 1.5


def test_crash_by_signal_and_by_exit_code(tmp_path):
    obs = run(tmp_path, "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)")
    assert (obs.outcome, obs.detail) == ("crash", "killed by SIGSEGV")
    obs = run(tmp_path, "import os\nos._exit(3)")
    assert (obs.outcome, obs.detail) == ("crash", "exit code 3 without a Python exception")


@pytest.mark.slow
def test_worker_dying_inside_pool_map_is_a_lost_task(tmp_path):
    obs = run(tmp_path, """
        import multiprocessing as mp
        import os
        import time

        def work(x):
            time.sleep(1)  # long enough for the probe to have seen this worker
            os._exit(1)

        if __name__ == "__main__":
            with mp.Pool(2) as pool:
                pool.map(work, [1])
    """, idle_s=3)
    assert obs.outcome == "lost task"
    assert obs.vanished
    assert obs.leftovers == []


@pytest.mark.slow
def test_worker_that_dies_too_fast_to_be_sampled_is_a_lost_task_by_its_traceback(tmp_path):
    """A spawn worker that cannot unpickle its task dies within one sample of the process tree;
    the "Process X:" header above its traceback still says it ended (TFP204's notebook scenario)."""
    obs = run(tmp_path, """
        import multiprocessing as mp
        import time

        class Task:
            def __reduce__(self):  # the worker fails while unpickling the task, as with a cell's function
                return (_missing, ())

        def _missing():
            raise AttributeError("Can't get attribute 'row_norm' on <module '__main__'>")

        if __name__ == "__main__":
            with mp.get_context("spawn").Pool(1) as pool:
                pool.map(print, [Task()])
    """, idle_s=3)
    assert obs.outcome == "lost task", obs
    assert obs.vanished and "AttributeError" in obs.detail


def test_a_killed_run_without_a_dead_worker_stays_a_hang() -> None:
    traceback = "Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\nValueError: boom\n"
    killed = runner.ProcessRun(returncode=-9, stdout="", stderr=traceback, duration_s=9.0, killed="idle")
    assert runner.classify(killed).outcome == "hang"
    died = runner.ProcessRun(returncode=-9, stdout="", stderr="Process SpawnPoolWorker-1:\n" + traceback,
                             duration_s=9.0, killed="idle")
    obs = runner.classify(died)
    assert (obs.outcome, obs.vanished) == ("lost task", ["SpawnPoolWorker-1"])


@pytest.mark.slow
def test_process_escaping_the_group_is_killed_and_reported(tmp_path):
    marker = f"escape-marker-{os.getpid()}"
    obs = run(tmp_path, f"""
        import subprocess
        import sys
        import time
        from runtime_probe.support import report

        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", "{marker}"],
                         start_new_session=True)
        time.sleep(1)
        report(1, 1)
    """)
    assert obs.outcome == "ok"
    assert len(obs.leftovers) == 1 and marker in obs.leftovers[0]
    assert _alive_with_marker(marker) == []


def test_execute_reads_output_and_exit_code():
    run_ = execute([sys.executable, "-c", "import sys; print('out'); print('err', file=sys.stderr); sys.exit(4)"],
                   timeout=30)
    assert (run_.returncode, run_.stdout.strip(), run_.stderr.strip(), run_.killed) == (4, "out", "err", None)


def test_traceback_chain_from_a_pool_worker():
    stderr = textwrap.dedent('''\
        multiprocessing.pool.RemoteTraceback:
        """
        Traceback (most recent call last):
          File "/usr/lib/python3.11/multiprocessing/pool.py", line 125, in worker
            result = (True, func(*args, **kwds))
        ValueError: boom
        """

        The above exception was the direct cause of the following exception:

        Traceback (most recent call last):
          File "/tmp/x.py", line 9, in <module>
            pool.map(work, [1])
        ValueError: boom
    ''')
    found = tracebacks.parse(stderr)
    final = tracebacks.final_parent_exception(found)
    assert [tb.in_worker for tb in found] == [True, False]
    assert (final.short_type, final.message, final.where) == ("ValueError", "boom", "worker")


def test_traceback_of_a_ray_task_error_names_both_types():
    stderr = textwrap.dedent('''\
        Traceback (most recent call last):
          File "/tmp/x.py", line 9, in <module>
            ray.get(refs)
        ray.exceptions.RayTaskError(InvalidArgumentError): ray::prepare() (pid=1, ip=127.0.0.1)
          File "/tmp/x.py", line 5, in prepare
        tensorflow.python.framework.errors_impl.InvalidArgumentError: Cannot convert a Tensor of dtype variant
    ''')
    final = tracebacks.final_parent_exception(tracebacks.parse(stderr))
    assert (final.short_type, final.where) == ("RayTaskError(InvalidArgumentError)", "parent")


def obs_ok(rate: float) -> runner.Observation:
    return runner.Observation(outcome="ok", duration_s=1, result={"ok": True, "metrics": {"tasks_per_s": rate}})


def test_judge_exception_fields_and_relative_throughput(tmp_path):
    bad = scenario(tmp_path, "", {"outcome": "exception", "type": "TypeError", "match": "cannot pickle",
                                  "where": "parent"})
    raised = runner.Observation("exception", 1, exc_type="builtins.TypeError",
                                message="cannot pickle 'Graph' object", where="parent")
    assert judge.check(bad, raised, {}) == (judge.CONFIRMED, "")
    raised.where = "worker"
    assert judge.check(bad, raised, {})[0] == judge.NOT_CONFIRMED

    slow = scenario(tmp_path, "", {"outcome": "ok", "slower_than": {"scenario": "fast", "factor": 3}})
    assert judge.check(slow, obs_ok(10), {"fast": obs_ok(100)})[0] == judge.CONFIRMED
    verdict, reason = judge.check(slow, obs_ok(50), {"fast": obs_ok(100)})
    assert verdict == judge.NOT_CONFIRMED and "x2.0" in reason
    assert judge.check(slow, obs_ok(10), {})[0] == judge.NOT_CONFIRMED  # nothing to compare with


def test_a_hang_or_a_lost_task_is_the_same_failure_where_the_scenario_says_so(tmp_path):
    """A fork pool whose initializer raises replaces its workers for ever: seen dying under load
    (a lost task), too fast to be seen otherwise (a hang)."""
    either = scenario(tmp_path, "", {"outcome": "hang", "or": "lost task"})
    only = scenario(tmp_path, "", {"outcome": "hang"})
    lost = runner.Observation("lost task", 90, detail="1823 worker process(es) died, the parent kept waiting")
    assert judge.check(either, lost, {}) == (judge.CONFIRMED, "")
    assert judge.check(either, runner.Observation("hang", 40), {}) == (judge.CONFIRMED, "")
    assert judge.check(only, lost, {})[0] == judge.NOT_CONFIRMED
    assert judge.check(either, runner.Observation("ok", 1), {})[0] == judge.NOT_CONFIRMED
    with pytest.raises(ValueError, match="'or'"):
        scenario(tmp_path, "", {"outcome": "exception", "or": "hang"})


def row(kind: str, verdict: str) -> dict:
    return {"kind": kind, "verdict": verdict}


def test_rule_status_needs_both_sides_and_ignores_skipped():
    assert judge.rule_status([row("bad", "confirmed"), row("fixed", "confirmed")]) == "confirmed"
    assert judge.rule_status([row("bad", "confirmed"), row("fixed", "not confirmed")]) == "not confirmed"
    assert judge.rule_status([row("bad", "confirmed")]).startswith("partial")
    assert judge.rule_status([row("bad", "skipped: no GPU")]) == "skipped: no GPU"


def test_every_scenario_declares_valid_metadata_and_each_rule_has_both_kinds():
    scenarios = catalog.discover()
    kinds = {}
    for s in scenarios:
        kinds.setdefault(s.rule, set()).add(s.kind)
        assert s.is_notebook or 'if __name__ == "__main__":' in s.source, s.name
    for rule in (rule.code for rule in all_rules()):
        assert kinds.get(rule) == {"bad", "fixed"}, (
            f"{rule} needs a probe scenario pair, runtime_probe/scenarios/{rule.lower()}_<what>_bad.py and "
            f"_fixed.py (CONTRIBUTING.md, step 4); it has {sorted(kinds.get(rule, ())) or 'none'}")
    names = {s.name for s in scenarios}
    assert all(catalog.compared_to(s) in names for s in scenarios if catalog.compared_to(s))


def test_a_pool_of_one_worker_per_cpu_is_skipped_on_big_machines(tmp_path):
    path = tmp_path / "per_cpu.py"
    path.write_text('PROBE = {"rule": "TFP302", "kind": "bad", "max_cpus": 8}\n')
    assert catalog.load(path).max_cpus == 8
    assert catalog.cpu_skip_reason(8, 2) is None and catalog.cpu_skip_reason(0, 64) is None
    assert catalog.cpu_skip_reason(8, 64) == "skipped: 64 CPUs here, it starts a TensorFlow worker per CPU (at most 8)"
    assert next(s for s in catalog.discover() if s.name == "tfp302_cpu_count_pool_bad").max_cpus == 8


def test_the_lint_loop_selects_each_scenarios_own_rule_even_an_opt_in_one():
    """TFP303's bad scenario is flagged by TFP303 (opt-in) and the other rules' scenarios are linted
    with the default rules only: the benchmark-style rows of TFP301's scenarios are TFP303's business."""
    chosen = [s for s in catalog.discover() if s.name in ("tfp303_row_pool_bad", "tfp301_keras_pool_fixed")]
    loop = lintloop.run(chosen, Path("/nonexistent"))
    checks = {(c.scenario, c.requirement): c for c in loop.checks}
    assert checks[("tfp303_row_pool_bad", "flagged TFP303")].passed
    assert checks[("tfp301_keras_pool_fixed", "lints clean")].passed


@pytest.mark.parametrize("name", ["tfp101_pathos_pool_graph_bad", "tfp101_child_manager_list_session_bad",
                                  "tfp201_tf1_tensor_eval_fork_pool_bad", "tfp201_tf1_op_run_fork_pool_bad",
                                  "tfp402_dataset_then_inter_op_threads_bad",
                                  "tfp103_lambda_module_model_spawn_executor_bad"])
def test_the_lint_loop_flags_the_recall_gap_scenarios(name):
    """Programs from public code and tracker reports that the linter used to miss (issue 18): each
    is flagged by its own rule (the probe shows each fails at run time)."""
    chosen = [s for s in catalog.discover() if s.name == name]
    loop = lintloop.run(chosen, Path("/nonexistent"))
    check = next(c for c in loop.checks if c.scenario == name)
    assert check.requirement == f"flagged {chosen[0].rule}" and check.passed, check.detail


def test_memory_metrics_are_shown_in_the_summary():
    observation = runner.Observation("ok", 1.0, result={"metrics": {"workers": 2, "worker_rss_mib": 533.4}})
    assert observation.summary() == "ok (2 workers of 533 MiB)"


def test_metadata_is_read_without_importing_the_script(tmp_path):
    path = tmp_path / "never_imported.py"
    path.write_text('raise SystemExit("imported!")\nPROBE = {"rule": "TFP1", "kind": "fixed"}\n')
    assert catalog.load(path).expect == {"outcome": "ok"}
    path.write_text('PROBE = {"rule": "TFP1", "kind": "fixed", "expect": {"outcome": "hang"}}\n')
    with pytest.raises(ValueError, match="must expect outcome 'ok'"):
        catalog.load(path)


def test_cli_usage_errors_exit_2(capsys):
    from runtime_probe import cli

    assert cli.main(["--rules", "TFP999"]) == 2
    assert cli.main(["--scenarios", "no_such_scenario"]) == 2
    assert cli.main(["--jobs", "0"]) == 2
    assert cli.main(["--bogus-option"]) == 2
    assert "unknown rule or scenario: TFP999" in capsys.readouterr().err


def test_progress_is_on_by_default_without_a_terminal_and_no_progress_silences_it(capsys, tmp_path):
    """pytest's way: a line per finished scenario whether or not stderr is a terminal (capsys's is
    not), so that a log shows a probe run that takes minutes is alive; --no-progress silences it."""
    from runtime_probe import cli

    assert cli.build_parser().parse_args([]).progress is True
    assert cli.build_parser().parse_args(["--no-progress"]).progress is False
    progress = cli.Progress(total=1, enabled=cli.build_parser().parse_args([]).progress)
    progress.scenario(scenario(tmp_path, ""), runner.Observation("ok", 3.2))
    assert capsys.readouterr().err == "[1/1] case: ok (3 s)\n"
    quiet = cli.Progress(total=1, enabled=cli.build_parser().parse_args(["--no-progress"]).progress)
    quiet.scenario(scenario(tmp_path, ""), runner.Observation("ok", 3.2))
    quiet.line("benchmark keras/initializer #1: ok")
    assert capsys.readouterr().err == ""


def test_missing_scenario_file_is_a_probe_error_not_a_crash(tmp_path):
    missing = scenario(tmp_path, REPORT + "report(1, 1)")
    missing.path.unlink()
    obs = runner.run_scenario(missing)
    assert (obs.outcome, obs.detail) == ("probe error", f"scenario file not found: {missing.path}")
    assert judge.check(missing, obs, {}) == (judge.PROBE_ERROR, f"scenario file not found: {missing.path}")


def test_interpreter_that_cannot_open_the_script_is_a_probe_error(tmp_path):
    run_ = execute([sys.executable, str(tmp_path / "gone.py")], timeout=30)
    assert run_.returncode == 2
    obs = runner.classify(run_)
    assert (obs.outcome, obs.detail) == ("probe error", f"scenario file not found: {tmp_path / 'gone.py'}")


def test_relative_scenario_path_runs_from_the_probes_directory(tmp_path, monkeypatch):
    # Each scenario runs in a temporary directory of its own: a relative path must be resolved first.
    here = scenario(tmp_path, REPORT + "report(1, 1)")
    monkeypatch.chdir(tmp_path)
    relative = catalog.Scenario(here.name, Path(here.path.name), here.rule, here.kind, here.expect)
    assert runner.run_scenario(relative).outcome == "ok"


def test_probe_error_fails_the_rule_and_the_run(tmp_path):
    bad = scenario(tmp_path, "", {"outcome": "hang"})
    assert judge.rule_status([row("bad", judge.PROBE_ERROR), row("fixed", "confirmed")]) == judge.PROBE_ERROR
    error = runner.Observation("probe error", 0, detail="scenario file not found: /x/case.py")
    loop = lintloop.LintLoop(status="ran")
    result = report.build([bad], {bad.name: error}, {}, loop, None, 0, 1.0, "probe")
    assert not result["passed"]
    assert result["rules"]["TFP999"]["status"] == judge.PROBE_ERROR
    assert "probe error" in result["result"] and "scenario file not found: /x/case.py" in result["result"]
    assert "crash" not in result["result"]


def test_progress_option_prints_one_line_per_scenario_when_not_a_terminal(capsys, tmp_path):
    from runtime_probe import cli

    assert cli.build_parser().parse_args(["--progress"]).progress is True
    progress = cli.Progress(total=2, enabled=True)
    progress.scenario(scenario(tmp_path, ""), runner.Observation("ok", 3.2))
    assert capsys.readouterr().err == "[1/2] case: ok (3 s)\n"


# notebooks, in a real Jupyter kernel ---------------------------------------------------------------------
def notebook_scenario(tmp_path: Path, cells: list[str], expect: dict | None = None) -> catalog.Scenario:
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    node = new_notebook(cells=[new_markdown_cell("probe")] + [new_code_cell(c) for c in cells])
    node.metadata["probe"] = {"rule": "TFP999", "kind": "bad", "expect": expect or {"outcome": "ok"}, "timeout": 60}
    path = tmp_path / "case.ipynb"
    nbformat.write(node, path)
    return catalog.load(path)


@pytest.mark.kernel
def test_notebook_metadata_and_result(tmp_path):
    found = notebook_scenario(tmp_path, ["%load_ext autoreload\nfrom runtime_probe.support import report",
                                         "!echo from the shell\nreport(2, 2)"])
    assert (found.name, found.rule, found.is_notebook) == ("case", "TFP999", True)
    obs = runner.run_scenario(found)
    assert obs.outcome == "ok", obs.stderr_tail
    assert obs.leftovers == []


@pytest.mark.kernel
def test_notebook_cell_exception_is_reported_from_the_parent(tmp_path):
    obs = runner.run_scenario(notebook_scenario(tmp_path, ["x = 1", "raise KeyError('no such row')"]))
    assert (obs.outcome, obs.exc_type, obs.where, obs.message) == ("exception", "KeyError", "parent", "'no such row'")


@pytest.mark.kernel
def test_hung_notebook_kernel_and_its_workers_are_killed(tmp_path):
    """The kernel runs in a session of its own; it and the workers it started must still go."""
    pids = tmp_path / "pids.txt"
    scenario_ = notebook_scenario(tmp_path, [
        "import multiprocessing as mp, os, time\n"
        "workers = [mp.Process(target=time.sleep, args=(600,)) for _ in range(2)]\n"
        "for w in workers:\n    w.start()\n"
        f"open({str(pids)!r}, 'w').write(' '.join(str(p) for p in [os.getpid()] + [w.pid for w in workers]))",
        "time.sleep(600)",
    ], {"outcome": "hang"})
    obs = runner.run_scenario(scenario_, idle_s=3)
    assert obs.outcome == "hang"
    assert obs.leftovers == []
    started = [int(pid) for pid in pids.read_text().split()]
    assert len(started) == 3
    for pid in started:
        try:
            assert psutil.Process(pid).status() == psutil.STATUS_ZOMBIE, pid
        except psutil.NoSuchProcess:
            pass


def test_notebook_metadata_must_be_there(tmp_path):
    path = tmp_path / "plain.ipynb"
    path.write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    with pytest.raises(ValueError, match="no notebook metadata 'probe'"):
        catalog.load(path)


def test_rules_are_selected_by_code_or_prefix():
    scenarios = catalog.discover()
    fourth = catalog.select(scenarios, rules=["TFP4"])
    assert {s.rule for s in fourth} == {"TFP401", "TFP402", "TFP403"}
    assert {s.rule for s in catalog.select(scenarios, rules=["TFP402"])} == {"TFP402"}
    # every GPU scenario belongs to a rule, so `--rules TFP4` on a GPU machine runs the GPU-memory ones
    assert all(s.rule.startswith("TFP") for s in scenarios if s.gpus)


def test_quick_set_has_a_bad_and_a_fixed_scenario_for_every_rule():
    scenarios = catalog.discover()
    quick = catalog.quick_set(scenarios)
    for rule in {s.rule for s in scenarios} | {rule.code for rule in all_rules()}:
        kinds = {s.kind for s in quick if s.rule == rule}
        assert kinds == {"bad", "fixed"}, f"{rule}: the quick set (`quick: True` in PROBE) needs a bad and a " \
            f"fixed scenario, it has {sorted(kinds) or 'none'}"
    assert {s.name for s in scenarios if s.gpus} <= {s.name for s in quick}
    assert len(quick) < len(scenarios) / 2
