"""Record only: how fast the pool replaces workers that die on start-up (counted tracebacks).

Runs two scenarios for 40 s each in their own process group and counts the workers' errors in
stderr: tfp402_threads_in_fork_initializer_bad (RuntimeError in the fork initializer) and
tfp202_module_level_spawn_pool_bad (RuntimeError: context has already been set on re-import).
"""
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from runtime_probe.support import report

PROBE = {"rule": "TFP402", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 200}
SCENARIOS = Path(__file__).resolve().parents[3] / "runtime_probe" / "scenarios"
CASES = [("tfp402_threads_in_fork_initializer_bad", "Intra op parallelism cannot be modified"),
         ("tfp202_module_level_spawn_pool_bad", "context has already been set"),
         ("tfp202_module_level_spawn_context_pool_bad", "finished its bootstrapping phase")]


def main():
    for name, needle in CASES:
        with tempfile.TemporaryFile() as err:
            start = time.monotonic()
            proc = subprocess.Popen([sys.executable, str(SCENARIOS / f"{name}.py")], stdout=subprocess.DEVNULL,
                                    stderr=err, start_new_session=True)
            try:
                proc.wait(timeout=40)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            elapsed = time.monotonic() - start
            err.seek(0)
            text = err.read().decode("utf-8", "replace")
        print(f"{name}: {text.count(needle)} worker errors ({needle!r}) in {elapsed:.0f} s", flush=True)
    report(True, True)


if __name__ == "__main__":
    main()
