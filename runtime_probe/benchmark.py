"""The benchmark of the fixes: each workload x pattern, each run in its own process group under a
time limit, repeated; medians with their spread. The measuring itself is in `bench_worker`.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile

from .process import execute
from .runner import classify, scenario_env

BATCH = 64
PATTERNS = {
    "per-task": "per-task state (spawn pool)",
    "init-spawn": "initializer (spawn pool)",
    "init-forkserver": "initializer (forkserver pool, TF preloaded)",
    "init-fork": "initializer (fork pool, parent only imported TF)",
    "chunked": f"initializer (spawn pool), {BATCH} rows per task",
    "server-single": "TF server process, one request per call",
    "server-batched": "TF server process, batched requests",
    "threads": "thread pool in one process",
    "sequential": "one process, one row per call",
    "batched": f"one process, {BATCH} rows per call",
}
MULTIPROCESS = ("per-task", "init-spawn", "init-forkserver", "init-fork", "chunked", "server-single",
                "server-batched")
WORKLOADS = {
    "graph": "TF1 graph + Session",
    "keras": "Keras 4xDense(256) loaded from .keras",
    "savedmodel": "SavedModel of the same weights",
}
MODES = {
    "quick": {"workloads": ("keras",), "repeats": 1, "min_time": 0.3, "limit": 120},
    "full": {"workloads": tuple(WORKLOADS), "repeats": 5, "min_time": 2.0, "limit": 240},
}
END_TO_END_TASKS = 200
ENTRY = "import sys; from runtime_probe.bench_worker import main; main(sys.argv[1:])"
RESULT_PREFIX = "BENCH-RESULT "


def _bench(python: str, args: list[str], limit: float, workdir: str):
    return execute([python, "-c", ENTRY, *args], timeout=limit, idle_s=30, cwd=workdir, env=scenario_env(workdir),
                   done_marker=RESULT_PREFIX)


def _parse(run) -> dict | None:
    for line in reversed(run.stdout.splitlines()):
        if line.startswith(RESULT_PREFIX):
            return json.loads(line[len(RESULT_PREFIX):])
    return None


def run(mode: str = "quick", progress=None, python: str = sys.executable) -> dict:
    """Run the benchmark; `progress(text)` after each run."""
    settings = MODES[mode]
    with tempfile.TemporaryDirectory(prefix="probe-bench-") as workdir:
        prep = _bench(python, ["prepare", workdir], settings["limit"], workdir)
        if prep.returncode != 0:
            return {"mode": mode, "settings": settings, "error": f"preparing the models: {classify(prep).summary()}"}
        runs = []
        for repeat in range(settings["repeats"]):
            for workload in settings["workloads"]:
                for pattern in PATTERNS:
                    args = ["run", workload, pattern, workdir, str(settings["min_time"])]
                    proc = _bench(python, args, settings["limit"], workdir)
                    record = _parse(proc) or {
                        "workload": workload, "pattern": pattern, "error": classify(proc).summary(),
                    }
                    record.update(repeat=repeat, wall_s=round(proc.duration_s, 1), leftovers=proc.leftovers)
                    runs.append(record)
                    if progress:
                        outcome = record.get("error") or f"{record['tasks_per_s']:.0f} tasks/s"
                        progress(f"benchmark {workload}/{pattern} #{repeat + 1}: {outcome}")
    return {
        "mode": mode,
        "settings": settings,
        "patterns": PATTERNS,
        "workloads": {w: WORKLOADS[w] for w in settings["workloads"]},
        "runs": runs,
        "summary": summarise(runs),
    }


def _stats(values: list[float]) -> dict | None:
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def summarise(runs: list[dict]) -> dict:
    """Per workload and pattern: medians and spread of the valid runs, and which pattern wins."""
    summary: dict = {}
    for workload in dict.fromkeys(r["workload"] for r in runs):
        rows = {}
        for pattern in PATTERNS:
            mine = [r for r in runs if r["workload"] == workload and r["pattern"] == pattern]
            good = [r for r in mine if "error" not in r and r["valid"]]
            row = {
                "runs": len(mine),
                "failed": [r.get("error", "wrong results") for r in mine if r not in good],
                "tasks_per_s": _stats([r["tasks_per_s"] for r in good]),
                "startup_s": _stats([r["startup_s"] for r in good]),
                "parent_rss_mib": _stats([r["peak_rss_mib"]["parent"] for r in good]),
                "worker_rss_mib": _stats([r["peak_rss_mib"]["worker"] for r in good if r["peak_rss_mib"]["worker"]]),
            }
            if row["tasks_per_s"]:
                row["end_to_end_s"] = row["startup_s"]["median"] + END_TO_END_TASKS / row["tasks_per_s"]["median"]
            rows[pattern] = row
        measured = {p: r for p, r in rows.items() if r["tasks_per_s"]}
        summary[workload] = {
            "patterns": rows,
            "fastest": max(measured, key=lambda p: measured[p]["tasks_per_s"]["median"], default=None),
            "fastest_multiprocess": max(
                (p for p in measured if p in MULTIPROCESS),
                key=lambda p: measured[p]["tasks_per_s"]["median"], default=None,
            ),
            "fastest_end_to_end": min(measured, key=lambda p: measured[p]["end_to_end_s"], default=None),
        }
    return summary
