"""Measure how often a fork after `import tensorflow` or TF1 graph building hangs (issue 34).

    PYTHONPATH=. python -m runtime_probe.fork_hazard --condition graph --runs 200 --parallel 2 --hogs 3 \
        --json docs/probe/fork-hazard.json --append --label loaded

Each run is a fresh Python program (this module with --child CONDITION) in its own process group:

- import:  `import tensorflow`;
- graph:   also `tf.Graph()` and a `tf.compat.v1.placeholder` under `as_default()` (no Session, no op run);
- folded:  the graph, plus ops whose shape inference evaluates constants (`tf.reshape(x, tf.constant(...))`,
           `tf.fill` with constant dims, `tf.zeros(tf.shape(...))` of a fully defined shape);

then a fork `Pool(2)` whose 2 tasks each build a small graph and run it in a new `tf.compat.v1.Session`.
The program records its threads (`/proc/self/task/*/comm`) after each step. A run that has not printed its
result within --limit seconds is a hang if its processes used no CPU for the next IDLE_CHECK_S seconds (else a
slow run, counted apart): its stacks are dumped (py-spy --native when available, else Python stacks via
faulthandler and each thread's kernel wait channel), then its whole process group and every descendant seen are
killed, and the script checks that nothing is left. Hogs are busy-loop processes started and killed here.

Several --condition flags run interleaved (round robin), so that the machine's changing load falls on all of them.
--until HH:MM (UTC) stops starting runs at that time; the JSON is rewritten after every run.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import psutil

CONDITIONS = ("import", "graph", "folded")
RESULT_PREFIX = "FORK_HAZARD_RESULT "
STAGE_PREFIX = "FORK_HAZARD_STAGE "
IDLE_CHECK_S = 5.0  # after the limit, the run's processes must use no CPU for this long to count as hung
IDLE_CPU_S = 0.05
PY_SPY = Path(sys.executable).with_name("py-spy")


# ---------------------------------------------------------------------------------------------------------------
# The measured program (runs in its own process with --child).

def _threads() -> list[str]:
    names = []
    for task in sorted(Path("/proc/self/task").iterdir(), key=lambda p: int(p.name)):
        try:
            names.append((task / "comm").read_text().strip())
        except OSError:
            pass
    return names


def _stage(name: str, record: dict) -> None:
    record[name] = _threads()
    print(STAGE_PREFIX + name, flush=True)


def _task(index: int) -> float:
    """Build a small graph and run it in a new Session (the pool worker's TensorFlow)."""
    import numpy as np
    import tensorflow as tf

    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float32, shape=(None, 16))
        w = tf.constant(np.full((16, 16), 0.5, dtype=np.float32))
        y = tf.reduce_sum(tf.matmul(x, w))
        with tf.compat.v1.Session(graph=graph) as sess:
            return float(sess.run(y, {x: np.ones((4, 16), dtype=np.float32) * index}))


def child(condition: str, forks: int = 1) -> None:
    import faulthandler
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # inherited by the fork workers
    record: dict = {}
    _stage("start", record)
    import tensorflow as tf
    _stage("imported", record)
    import multiprocessing as mp
    kept, results = [], []
    for index in range(forks):
        suffix = f"_{index}" if forks > 1 else ""
        if condition in ("graph", "folded"):
            graph = tf.Graph()
            with graph.as_default():
                p = tf.compat.v1.placeholder(tf.float32, shape=(None, 4))
                kept.append(p)
            _stage("graph_built" + suffix, record)
        if condition == "folded":
            with graph.as_default():
                kept.append(tf.reshape(p, tf.constant([-1, 2])))
                kept.append(tf.fill(tf.constant([2, 3]), 1.0))
                kept.append(tf.zeros(tf.shape(tf.ones((3, 4)))))
            _stage("constants_folded" + suffix, record)
        # The hazard measured here: TFP201 reports this fork (and TFP301 the graph each task builds).
        with mp.get_context("fork").Pool(2) as pool:  # noqa: TFP201
            _stage("pool_started" + suffix, record)
            results.append(pool.map(_task, range(2)))  # noqa: TFP301
        _stage("pool_done" + suffix, record)
    _stage("done", record)
    print(RESULT_PREFIX + json.dumps({"results": results, "threads": record}), flush=True)


# ---------------------------------------------------------------------------------------------------------------
# The driver.

@dataclass
class Run:
    condition: str
    outcome: str  # "ok", "hang", "slow", "error"
    wall_s: float
    last_stage: str
    load_at_start: float
    threads: dict = field(default_factory=dict)
    evidence: str = ""
    forks_done: int = 0  # fork pools that returned
    leftovers: list[str] = field(default_factory=list)


def _tree(root: psutil.Process, seen: dict[int, psutil.Process]) -> list[psutil.Process]:
    try:
        members = [root, *root.children(recursive=True)]
    except psutil.Error:
        members = []
    for proc in members:
        seen.setdefault(proc.pid, proc)
    return members


def _cpu(members: list[psutil.Process]) -> float:
    total = 0.0
    for proc in members:
        try:
            times = proc.cpu_times()
            total += times.user + times.system
        except psutil.Error:
            pass
    return total


def _dump(members: list[psutil.Process]) -> str:
    """Stacks of a hung run: py-spy --native if it works here, else faulthandler + kernel wait channels."""
    parts = []
    for proc in members:
        try:
            head = f"--- pid {proc.pid} ({' '.join(proc.cmdline()[-3:])}) status={proc.status()}"
        except psutil.Error:
            continue
        parts.append(head)
        for task in sorted(Path(f"/proc/{proc.pid}/task").glob("*"), key=lambda p: int(p.name)):
            try:
                comm = (task / "comm").read_text().strip()
                wchan = (task / "wchan").read_text().strip()
            except OSError:
                continue
            parts.append(f"  thread {task.name} {comm} wchan={wchan}")
        if PY_SPY.exists():
            spy = subprocess.run([str(PY_SPY), "dump", "--native", "--pid", str(proc.pid)],
                                 capture_output=True, text=True, timeout=60)
            parts.append((spy.stdout + spy.stderr).strip())
        try:
            proc.send_signal(signal.SIGUSR1)  # faulthandler writes the Python stacks to the run's stderr
        except psutil.Error:
            pass
    return "\n".join(parts)


def _kill(proc: subprocess.Popen, seen: dict[int, psutil.Process]) -> list[str]:
    """Kill the run's process group and every descendant seen; return what was still alive afterwards."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    for member in seen.values():
        try:
            member.kill()
        except psutil.Error:
            pass
    proc.wait()
    # SIGKILL is delivered at once but a loaded machine may take a moment to end the processes.
    _, alive = psutil.wait_procs(list(seen.values()), timeout=15)
    left = []
    for member in alive:
        try:
            if member.is_running() and member.status() != psutil.STATUS_ZOMBIE:
                left.append(f"{member.pid} {member.name()}")
        except psutil.Error:
            pass
    return left


def run_once(condition: str, limit_s: float, forks: int = 1, command: list[str] | None = None) -> Run:
    """One program (`command`: another one, for tests) in its own session, under the limit."""
    load = os.getloadavg()[0]
    started = time.monotonic()
    command = command or [sys.executable, "-m", "runtime_probe.fork_hazard", "--child", condition,
                          "--forks-per-run", str(forks)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    root = psutil.Process(proc.pid)
    seen: dict[int, psutil.Process] = {}
    out: list[str] = []
    err: list[str] = []
    readers = [threading.Thread(target=lambda s=s, b=b: b.extend(s), daemon=True)
               for s, b in ((proc.stdout, out), (proc.stderr, err))]
    for reader in readers:
        reader.start()
    outcome, evidence = None, ""
    deadline = started + limit_s
    while proc.poll() is None:
        _tree(root, seen)
        if time.monotonic() >= deadline:
            members = _tree(root, seen)
            before = _cpu(members)
            time.sleep(IDLE_CHECK_S)
            members = _tree(root, seen)
            idle = _cpu(members) - before < IDLE_CPU_S
            if not idle and time.monotonic() < started + 3 * limit_s:
                deadline = time.monotonic() + limit_s / 4  # still working: a slow run, give it more time
                continue
            outcome = "hang" if idle else "slow"
            evidence = _dump(members)
            time.sleep(1.0)
            evidence += "\n" + _dump(_tree(root, seen)) if outcome == "hang" else ""
            break
        time.sleep(0.2)
    leftovers = _kill(proc, seen)
    for reader in readers:
        reader.join(timeout=5)
    wall = time.monotonic() - started
    stages = [line[len(STAGE_PREFIX):] for line in out if line.startswith(STAGE_PREFIX)]
    result = next((json.loads(line[len(RESULT_PREFIX):]) for line in out if line.startswith(RESULT_PREFIX)), None)
    if outcome is None:
        outcome = "ok" if result and proc.returncode == 0 else "error"
        if outcome == "error":
            evidence = "".join(err)[-3000:]
    else:
        evidence += "\n--- stderr (faulthandler)\n" + "".join(err)[-8000:]
    done = sum(stage.startswith("pool_done") for stage in stages)
    return Run(condition, outcome, round(wall, 2), stages[-1].strip() if stages else "",
               round(load, 2), (result or {}).get("threads", {}), evidence, done, leftovers)


class Hogs:
    def __init__(self, count: int):
        self.procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
                      for _ in range(count)]

    def stop(self) -> None:
        for proc in self.procs:
            proc.kill()
            proc.wait()
        alive = [p.pid for p in self.procs if psutil.pid_exists(p.pid)
                 and psutil.Process(p.pid).status() != psutil.STATUS_ZOMBIE]
        if alive:
            raise RuntimeError(f"hogs still alive: {alive}")


def _summary(runs: list[Run], condition: str) -> dict:
    mine = [r for r in runs if r.condition == condition]
    counts = {k: sum(r.outcome == k for r in mine) for k in ("ok", "hang", "slow", "error")}
    walls = sorted(r.wall_s for r in mine if r.outcome == "ok")
    first_threads = next((r.threads for r in mine if r.threads), {})
    forks = sum(r.forks_done + (r.outcome != "ok") for r in mine)
    return {
        "runs": len(mine), "fork_pools": forks, **{f"{k}s" if k != "slow" else "slow": v for k, v in counts.items()},
        "median_ok_wall_s": walls[len(walls) // 2] if walls else None,
        "load_at_run_start": {"min": min((r.load_at_start for r in mine), default=None),
                              "max": max((r.load_at_start for r in mine), default=None)},
        "threads_after_each_step": first_threads,
        "hung_runs": [{"last_stage": r.last_stage, "wall_s": r.wall_s, "load_at_start": r.load_at_start,
                       "leftovers": r.leftovers, "evidence": r.evidence} for r in mine if r.outcome != "ok"],
    }


def measure(args) -> dict:
    import tensorflow as tf  # noqa: F401 - only its version, in the driver
    version = tf.__version__
    runs: list[Run] = []
    started_at = dt.datetime.now(dt.timezone.utc)
    load_start = os.getloadavg()
    hogs = Hogs(args.hogs)
    order = [args.condition[i % len(args.condition)] for i in range(args.runs * len(args.condition))]
    lock = threading.Lock()
    stop_at = None
    if args.until:
        hour, minute = map(int, args.until.split(":"))
        stop_at = started_at.replace(hour=hour, minute=minute, second=0, microsecond=0)
    t0 = time.monotonic()

    def document(load_end=None) -> dict:
        return {
            "label": args.label,
            "command": "python -m runtime_probe.fork_hazard " + " ".join(sys.argv[1:]),
            "started_utc": started_at.isoformat(timespec="seconds"),
            "tensorflow": version, "python": platform.python_version(), "cores": os.cpu_count(),
            "parallel": args.parallel, "hogs": args.hogs, "limit_s": args.limit,
            "forks_per_run": args.forks_per_run,
            "load_average_start": [round(x, 2) for x in load_start],
            "load_average_end": [round(x, 2) for x in (load_end or os.getloadavg())],
            "wall_s": round(time.monotonic() - t0, 1),
            "py_spy": PY_SPY.exists(),
            "conditions": {c: _summary(runs, c) for c in args.condition},
        }

    def one(condition: str) -> None:
        if stop_at and dt.datetime.now(dt.timezone.utc) >= stop_at:
            return
        run = run_once(condition, args.limit, args.forks_per_run)
        with lock:
            runs.append(run)
            print(f"{len(runs):4d} {condition:7s} {run.outcome:5s} {run.wall_s:6.1f}s load={run.load_at_start} "
                  f"stage={run.last_stage}", flush=True)
            if args.json:
                write(args, document())

    try:
        with ThreadPoolExecutor(args.parallel) as executor:
            list(executor.map(one, order))
    finally:
        load_end = os.getloadavg()
        hogs.stop()
    doc = document(load_end)
    if args.json:
        write(args, doc)
    return doc


def write(args, doc: dict) -> None:
    path = Path(args.json)
    sets = []
    if args.append and path.exists() and not getattr(args, "_base", None):
        args._base = json.loads(path.read_text()).get("sets", [])
    sets = [s for s in getattr(args, "_base", None) or [] if s.get("label") != args.label] + [doc]
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"sets": sets}, indent=1) + "\n")
    shutil.move(tmp, path)


HEADLINE = ("loaded", "graph")  # the set and condition that TFP201's message and the guard's warning cite


def rate_text(doc: dict) -> str:
    """What TFP201's finding and the guard's warning say of the measured rate (tests/test_fork_hazard.py)."""
    figures = next(s for s in doc["sets"] if s["label"] == HEADLINE[0])["conditions"][HEADLINE[1]]
    return f"measured: {figures['hangs']} of {figures['runs']} runs hung under load"


def table(doc: dict) -> str:
    """The figures as a Markdown table (docs/probe/fork-hazard.md): one row per set and condition."""
    rows = ["| set | condition | programs | fork pools | hangs | slow | errors | programs at a time | hogs | "
            "load average (1 min) at start / end | load at run starts | median run | wall |",
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: | ---: |"]
    for s in doc["sets"]:
        for name, c in s["conditions"].items():
            load = c["load_at_run_start"]
            rows.append(
                f"| {s['label']} | {name} | {c['runs']} | {c.get('fork_pools', c['runs'])} | {c['hangs']} | "
                f"{c['slow']} | {c['errors']} | {s['parallel']} | {s['hogs']} | {s['load_average_start'][0]} / "
                f"{s['load_average_end'][0]} | {load['min']}-{load['max']} | {c['median_ok_wall_s']} s | "
                f"{s['wall_s'] / 60:.0f} min |")
    return "\n".join(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--child", choices=CONDITIONS, help=argparse.SUPPRESS)
    parser.add_argument("--condition", action="append", choices=CONDITIONS)
    parser.add_argument("--runs", type=int, default=20, help="runs per condition")
    parser.add_argument("--parallel", type=int, default=2, help="programs at a time")
    parser.add_argument("--hogs", type=int, default=3, help="busy-loop processes next to them")
    parser.add_argument("--limit", type=float, default=60.0, help="seconds before a run is checked for a hang")
    parser.add_argument("--forks-per-run", type=int, default=1,
                        help="K: fork pools one after another in each program (each after its own graph building)")
    parser.add_argument("--until", help="HH:MM UTC: start no run after this time")
    parser.add_argument("--label", default="run", help="name of this set in the JSON")
    parser.add_argument("--json", help="write the figures here (rewritten after every run)")
    parser.add_argument("--append", action="store_true", help="keep the JSON's other sets (other labels)")
    parser.add_argument("--table", metavar="JSON", help="print the figures of JSON as a Markdown table and stop")
    args = parser.parse_args(argv)
    if args.table:
        print(table(json.loads(Path(args.table).read_text(encoding="utf-8"))))
        return 0
    if args.child:
        child(args.child, args.forks_per_run)
        return 0
    args.condition = args.condition or ["graph"]
    doc = measure(args)
    for name, summary in doc["conditions"].items():
        print(f"{name}: {summary['hangs']} hangs, {summary['slow']} slow, {summary['errors']} errors "
              f"in {summary['runs']} runs (load {doc['load_average_start']} -> {doc['load_average_end']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
