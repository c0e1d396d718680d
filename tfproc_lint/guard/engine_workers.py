"""TFP301 inside Ray, Dask and Spark workers: a task that loads (or builds) what an earlier task of the
same worker process already loaded. Engine workers serve many tasks in turn, so state built per task
is built again and again; the engines' own fixes build it once per worker (a Ray actor, a Dask
WorkerPlugin, a Spark iterator pandas_udf or mapPartitions).

How the guard gets into the workers (installed by engines.py in the driver):
- Ray: `ray.init` gets a `worker_process_setup_hook` (runtime_env) that calls `tfproc_lint.guard.setup_engine_worker`;
- Dask: a LocalCluster's workers are spawned by multiprocessing and get the guard as every spawned child;
- Spark: the Python daemon that forks the workers is `tfproc_lint.guard.spark_daemon`
  (`spark.python.daemon.module`, set on the SparkContext's configuration unless the program set it).

A warning printed in a Ray or Spark worker may never reach the driver's terminal (Ray's
`log_to_driver=False`, Spark's executor logs), so these workers also append it to a file named in
the environment they inherit from the driver, and the driver prints what they wrote when it exits.

TFP303 in engine workers: one-row model calls. A Spark task runs one partition, so many one-row
calls in one task are a loop over its rows (ROW_CALLS or more, nearly all of the task's calls); a Ray
or Dask task over a single row calls the model about once, so there it is counted across the tasks of
the worker, as for a pool. A Ray or Dask task that calls the model many times (a rollout, a decoding
loop) is left alone: its calls may depend on each other.

The running task comes from the engine's own task context. Ray and Dask tasks are counted per
worker: the same model file (or graph) built in REPEATS different tasks. A Spark Python worker runs
one partition per task and is reused for the next partition, so one load per partition is the fix
there: it is counted within one task, and REPEATS builds in one task (one per row) is the finding.
This module imports nothing of the guard: costs.py asks it and warns, and the guard's package sets
it up in a worker (`tfproc_lint.guard.setup_engine_worker`).
"""

from __future__ import annotations

import os
import sys

from tfproc_lint.knowledge.engines import ENGINE_FACTS

REPEATS = 3  # a retried task or a second actor may build twice; the probe's bad scenarios build 20-40 times
MAX_TRACKED = 256
FIXES = {facts.name: facts.guard_build_fix for facts in ENGINE_FACTS.values()}  # knowledge/engines.py
# One-row model calls before TFP303 (as in costs.py): the probe's bad Spark scenario makes 256 per
# task, its fixed twin one call per partition; a Ray or Dask worker's tasks at most CALLS_PER_TASK each.
ROW_CALLS = 100
CALLS_PER_TASK = 2
MAX_TASKS = 4096  # Ray and Dask tasks remembered per worker (the count then stays: a missed warning at worst)
ROW_FIXES = {facts.name: facts.guard_row_fix for facts in ENGINE_FACTS.values()}
REPORT_ENV = "TFPROC_GUARD_WORKER_REPORT"
reporting = False  # this process is an engine worker that reports its warnings to the driver
_tasks_of: dict[tuple, set] = {}  # Ray, Dask: identity -> the tasks that built it
_in_task: dict[tuple, int] = {}  # Spark: (task, identity) -> builds in that task
_spark_calls = [None, 0, 0]  # Spark: the task, its one-row model calls, all its model calls
_row_tasks: set = set()  # Ray, Dask: the tasks that ran the model on one row
_row_calls = [0, 0]  # Ray, Dask: one-row model calls in tasks, all model calls in tasks


def current_task() -> tuple[str, object] | None:
    """(engine, task) for the engine task running in this thread; None outside engine tasks."""
    ray = sys.modules.get("ray")
    if ray is not None:
        try:
            task = ray.get_runtime_context().get_task_id()  # None in the driver
        except Exception:  # noqa: BLE001 - Ray imported but not connected
            task = None
        if task:
            return "ray", task
    utils = sys.modules.get("distributed.utils")
    if utils is not None:
        key = getattr(utils.thread_state, "key", None)  # set while a Dask worker thread runs a task
        if key is not None:
            return "dask", key
    taskcontext = sys.modules.get("pyspark.taskcontext")
    if taskcontext is not None:
        context = taskcontext.TaskContext.get()
        if context is not None:
            return "spark", context.taskAttemptId()
    return None


def built(identity: tuple, what: str) -> tuple[bool, str | None, str | None]:
    """(whether an engine task built it, the TFP301 message and the engine's fix when it is built per
    task or per row)."""
    running = current_task()
    if running is None:
        return False, None, None
    engine, task = running
    if len(_tasks_of) + len(_in_task) >= MAX_TRACKED:
        _tasks_of.clear()
        _in_task.clear()
    if engine == "spark":
        count = _in_task[(task, identity)] = _in_task.get((task, identity), 0) + 1
        if count < REPEATS:
            return True, None, None
        how = f"{count} times in one Spark task (once per row)"
    else:
        tasks = _tasks_of.setdefault(identity, set())
        tasks.add(task)
        if len(tasks) < REPEATS:
            return True, None, None
        how = f"in {len(tasks)} {'Ray' if engine == 'ray' else 'Dask'} tasks"
    return True, (f"worker process {os.getpid()} built {what} {how}: every call pays the whole build (the "
                  "program goes on)"), FIXES[engine]


def model_called(one_row: bool) -> tuple[bool, str | None, str | None]:
    """(whether an engine task made this model call, the TFP303 message and the engine's fix when its
    tasks run the model one row at a time)."""
    running = current_task()
    if running is None:
        return False, None, None
    engine, task = running
    if engine == "spark":
        if _spark_calls[0] != task:
            _spark_calls[:] = [task, 0, 0]
        _spark_calls[1] += one_row
        _spark_calls[2] += 1
        rows, calls = _spark_calls[1], _spark_calls[2]
        if not one_row or rows < ROW_CALLS or rows * 10 < calls * 9:
            return True, None, None
        how = f"{rows} times in one Spark task (a call per row of its partition)"
    else:
        _row_calls[1] += 1
        if not one_row:
            return True, None, None
        _row_calls[0] += 1
        if len(_row_tasks) < MAX_TASKS:
            _row_tasks.add(task)
        rows, calls = _row_calls
        if rows < ROW_CALLS or rows > CALLS_PER_TASK * len(_row_tasks) or rows * 10 < calls * 9:
            return True, None, None
        how = f"{rows} times, about once per task ({len(_row_tasks)} {'Ray' if engine == 'ray' else 'Dask'} tasks)"
    return True, (f"worker process {os.getpid()} ran its Keras model on one row at a time {how}: each call "
                  "pays the model's fixed cost for a single row (the program goes on)"), ROW_FIXES[engine]


def driver_report() -> str:
    """In the driver (once an engine is imported): the file its engine workers report to, printed
    at exit."""
    path = os.environ.get(REPORT_ENV)
    if path is None:
        import atexit
        import tempfile  # here, not at the top: the guard's start-up is part of every guarded run

        handle, path = tempfile.mkstemp(prefix="tfproc-guard-", suffix=".txt")
        os.close(handle)
        os.environ[REPORT_ENV] = path  # inherited by Ray's raylet and Spark's JVM, and so by their workers
        atexit.register(_print_reports, path)
    return path


def _print_reports(path: str) -> None:
    try:
        with open(path, encoding="utf-8") as handle:
            lines = list(dict.fromkeys(line.rstrip("\n") for line in handle if line.strip()))
        os.unlink(path)
    except OSError:
        return
    for line in lines:
        print(f"tfproc-guard (from an engine worker): {line}", file=sys.stderr, flush=True)


def report(text: str) -> None:
    """In an engine worker: hand a warning to the driver (one line, appended)."""
    path = os.environ.get(REPORT_ENV)
    if not reporting or not path:
        return
    try:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(" ".join(text.split()) + "\n")
    except OSError:
        pass
