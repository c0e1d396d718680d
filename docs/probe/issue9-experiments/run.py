"""Run record-only experiment scripts (scenario format, any path) with the probe's runner.

    PYTHONPATH=. python docs/probe/issue9-experiments/run.py 3 docs/probe/issue9-experiments/var_fork.py

Each script runs N times in its own process group under its PROBE time limit, classified like a
scenario (ok / wrong result / exception / hang / lost task / crash); prints the outcome, duration,
what the script printed, the result line and, unless ok, the last lines of stderr. These are not scenarios: they record
facts that no rule is judged on. A script whose PROBE says "idle_s": None waits for its own time
limits (it has idle phases on purpose); the others are called hung after the runner's idle time.
"""
import json
import shutil
import sys
import tempfile
from pathlib import Path

from runtime_probe import catalog, runner
from runtime_probe.process import execute
from runtime_probe.support import RESULT_PREFIX


def run_once(scenario, idle_s):
    """runner.run_scenario, keeping what the script printed (the facts it records)."""
    tmpdir = tempfile.mkdtemp(prefix=f"probe-{scenario.path.stem}-")
    try:
        run = execute([sys.executable, str(scenario.path)], timeout=scenario.timeout, idle_s=idle_s,
                      cwd=tmpdir, env=runner.scenario_env(tmpdir))
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    printed = [line for line in run.stdout.splitlines() if not line.startswith(RESULT_PREFIX)]
    return runner.classify(run), printed


def main(argv):
    count, paths = int(argv[0]), argv[1:]
    for path in paths:
        scenario = catalog.load(Path(path).resolve())
        idle_s = catalog.read_metadata(scenario.source, path).get("idle_s", runner.IDLE_S)
        for index in range(count):
            obs, printed = run_once(scenario, idle_s)
            print(f"== {scenario.name} run {index + 1}: {obs.summary()} [{obs.duration_s:.1f} s] "
                  f"leftovers={obs.leftovers}", flush=True)
            for line in printed:
                print("   |", line, flush=True)
            if obs.result:
                print("   result:", json.dumps(obs.result)[:600], flush=True)
            if obs.outcome != "ok":
                print("   stderr tail:\n   " + obs.stderr_tail.replace("\n", "\n   "), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
