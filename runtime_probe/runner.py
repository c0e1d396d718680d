"""Run scenario scripts and classify what happened.

Outcomes: ok (result line printed and the script's own check passed, and the process ended),
wrong result (printed, but the check failed), exception (type, first message line, parent or worker),
hang (no result before the limit, the whole process tree idle for `idle_s`, or a result printed but
no exit: idle, or still running EXIT_LIMIT_S after it), lost task (like a hang, but a worker
process died while the parent kept waiting), crash (killed by a signal, or a nonzero exit without
a Python exception), no result (exit 0 without a result line). A scenario the probe could not
start (its file is missing) is a probe error, never an outcome of the scenario.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import process, tracebacks
from .catalog import Scenario
from .process import ProcessRun, execute
from .support import RESULT_PREFIX

PACKAGE_PARENT = Path(__file__).resolve().parent.parent  # what PYTHONPATH needs for runtime_probe
IDLE_S = 8.0
PROBE_ERROR = "probe error"
# What the interpreter prints (then exits 2) when it cannot open the script it was given.
CANNOT_OPEN = re.compile(r"can't open file '(?P<path>.+)': \[Errno (?P<errno>\d+)\] (?P<reason>.+)")


@dataclass
class Observation:
    outcome: str
    duration_s: float
    returncode: int | None = None
    exc_type: str | None = None
    message: str | None = None
    where: str | None = None
    detail: str = ""
    result: dict | None = None
    leftovers: list[str] = field(default_factory=list)
    vanished: list[str] = field(default_factory=list)
    stderr_tail: str = ""
    guard_codes: list[str] = field(default_factory=list)  # rule codes the runtime guard reported
    stretch: float = 1.0  # how much the machine's load slowed the run, and stretched its limit (process.py)
    exit_s: float | None = None  # seconds from the result line to the exit, when seen

    def summary(self) -> str:
        if self.outcome == "exception":
            return f"exception {self.exc_type}: {self.message} ({self.where})"
        metrics = (self.result or {}).get("metrics") or {}
        measured = []
        if metrics.get("tasks_per_s"):
            measured.append(f"{metrics['tasks_per_s']:,.0f} tasks/s")
        if metrics.get("worker_rss_mib"):  # memory per worker (TFP302's scenarios)
            measured.append(f"{metrics.get('workers', '?')} workers of {metrics['worker_rss_mib']:,.0f} MiB")
        detail = self.detail or ", ".join(measured)
        return f"{self.outcome} ({detail})" if detail else self.outcome

    def to_dict(self) -> dict:
        return asdict(self)


def parse_result(stdout: str) -> dict | None:
    lines = [line for line in stdout.splitlines() if line.startswith(RESULT_PREFIX)]
    if not lines:
        return None
    try:
        return json.loads(lines[-1][len(RESULT_PREFIX):])
    except json.JSONDecodeError:
        return None


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def classify(run: ProcessRun) -> Observation:
    result = parse_result(run.stdout)
    found = tracebacks.parse(run.stderr)
    worker_errors = [tb for tb in found if tb.in_worker]
    obs = Observation(
        outcome="no result",
        duration_s=round(run.duration_s, 2),
        returncode=run.returncode,
        result=result,
        leftovers=run.leftovers,
        stderr_tail="\n".join(run.stderr.splitlines()[-15:]),
        guard_codes=guard_codes(run.stderr),
        stretch=run.stretch,
        exit_s=run.exit_s,
    )

    def exception(tb: tracebacks.Traceback) -> Observation:
        obs.outcome, obs.exc_type, obs.message, obs.where = "exception", tb.type, tb.message, tb.where
        return obs

    if run.killed:
        reasons = {
            "idle": "no CPU used by any of its processes",
            "timeout": "time limit reached",
            "exit": f"still running {process.EXIT_LIMIT_S:.0f} s after it",
        }
        how = reasons.get(run.killed, run.killed)
        if run.killed in ("timeout", "exit") and run.stretch >= 1.1:  # the limit stretched with the load
            how += f" (x{run.stretch:.1f} for the machine's load)"
        stopped = f"{how}, killed after {run.duration_s:.0f} s"
        if result is not None:
            obs.outcome, obs.detail = "hang", f"result printed but the process did not exit; {stopped}"
        elif run.vanished or any(tb.died for tb in worker_errors):
            # A worker seen to exit, or one whose exception ended it ("Process X:" above its
            # traceback): a worker that dies within one sample of the tree is never seen to exit.
            obs.outcome = "lost task"
            obs.vanished = run.vanished or sorted({tb.died for tb in worker_errors if tb.died})
            obs.detail = f"{len(obs.vanished)} worker process(es) died, the parent kept waiting; {stopped}"
            if worker_errors:
                obs.detail += f"; worker error {worker_errors[-1].short_type}: {worker_errors[-1].message}"
        else:
            obs.outcome, obs.detail = "hang", f"no result; {stopped}"
        return obs
    if run.returncode < 0:
        obs.outcome, obs.detail = "crash", f"killed by {_signal_name(-run.returncode)}"
        return obs
    cannot_open = CANNOT_OPEN.search(run.stderr) if run.returncode == 2 and not found else None
    if cannot_open:
        obs.outcome, obs.detail = PROBE_ERROR, _cannot_open(cannot_open)
        return obs
    if run.returncode > 0:
        final = tracebacks.final_parent_exception(found)
        if final is not None or worker_errors:
            return exception(final or worker_errors[-1])
        obs.outcome, obs.detail = "crash", f"exit code {run.returncode} without a Python exception"
        return obs
    if result is not None:
        obs.outcome = "ok" if result.get("ok") else "wrong result"
        return obs
    if worker_errors:
        return exception(worker_errors[-1])
    obs.detail = "exit code 0 without a result line"
    return obs


GUARD_CODE = re.compile(r"\b(TFP\d{3}): ")  # the guard's messages: "TFP201: ... Fix: ..."


def guard_codes(stderr: str) -> list[str]:
    """The rule codes of the runtime guard's errors and warnings in a run's stderr, first seen first."""
    return list(dict.fromkeys(GUARD_CODE.findall(stderr)))


def _cannot_open(match: re.Match) -> str:
    if match.group("errno") == "2":
        return f"scenario file not found: {match.group('path')}"
    return f"cannot open scenario file {match.group('path')}: {match.group('reason')}"


def scenario_env(tmpdir: str) -> dict:
    """The caller's environment, with runtime_probe importable and a private temp directory."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PACKAGE_PARENT), env.get("PYTHONPATH")]))
    env["TMPDIR"] = tmpdir  # scenarios put their model files in tempfile.gettempdir()
    env["PYTHONUNBUFFERED"] = "1"  # keep what a killed scenario printed
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    return env


def run_scenario(scenario: Scenario, *, timeout: float | None = None, idle_s: float | None = IDLE_S,
                 python: str = sys.executable, guard: bool = False) -> Observation:
    """Run one scenario; `guard`: under tfproc-lint's runtime guard (`python -m tfproc_lint.guard`, or
    the notebook's kernel with `%load_ext tfproc_lint.guard` before its cells)."""
    path = scenario.path.absolute()  # the scenario runs in a directory of its own
    if not path.is_file():
        return Observation(PROBE_ERROR, 0.0, detail=f"scenario file not found: {path}")
    tmpdir = tempfile.mkdtemp(prefix=f"probe-{scenario.path.stem}-")
    cwd = tmpdir
    if scenario.root is not None:  # a package: its entry script runs in a copy, where its imports resolve
        cwd = copy_package(scenario.root, Path(tmpdir) / scenario.root.name)
        path = cwd / scenario.path.relative_to(scenario.root)
    argv = [python, *(["-m", "tfproc_lint.guard"] if guard else []), str(path)]
    if path.suffix == ".ipynb":  # its cells run in a Jupyter kernel, in the same directory
        argv = [python, "-m", "runtime_probe.notebook_runner", *(["--guard"] if guard else []), str(path)]
    try:
        run = execute(
            argv,
            timeout=timeout or scenario.timeout,
            idle_s=idle_s,
            cwd=str(cwd),
            env=scenario_env(tmpdir),
            done_marker=RESULT_PREFIX,
        )
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    return classify(run)


def copy_package(folder: Path, target: Path) -> Path:
    """A copy of a package scenario's folder, without the bytecode caches of earlier runs."""
    shutil.copytree(folder, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return target


def run_all(scenarios: list[Scenario], *, jobs: int = 2, progress=None, **options) -> dict[str, Observation]:
    """Run the scenarios, `jobs` at a time; `progress(scenario, observation)` after each."""

    def one(scenario: Scenario) -> Observation:
        obs = run_scenario(scenario, **options)
        if progress:
            progress(scenario, obs)
        return obs

    # Expected hangs first: they mostly wait, and the other slot keeps working meanwhile.
    ordered = sorted(scenarios, key=lambda s: s.expect["outcome"] not in ("hang", "lost task"))
    process.clear_interrupt()
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {s.name: pool.submit(one, s) for s in ordered}
        try:
            return {s.name: futures[s.name].result() for s in scenarios}
        except KeyboardInterrupt:
            for future in futures.values():
                future.cancel()
            process.interrupt_all()
            raise
