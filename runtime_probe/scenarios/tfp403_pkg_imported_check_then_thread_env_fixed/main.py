"""The twin of tfp403_pkg_imported_check_then_thread_env_bad: the entry sets the two variables before
`trainer.checks` runs its op, so the runtime creates its pools with one thread each: the process
has as many threads as a fresh interpreter started with the variables, fewer than one without.
"""
import os
import subprocess
import sys

from trainer.checks import check_input
from trainer.work import thread_count, work

from runtime_probe.support import report

PROBE = {"rule": "TFP403", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 60}

LIMITS = {"TF_NUM_INTRAOP_THREADS": "1", "TF_NUM_INTEROP_THREADS": "1"}


def reference_threads(limited):
    """Threads of a fresh interpreter doing the same work, with LIMITS from the start or without them."""
    env = {key: value for key, value in os.environ.items() if key not in LIMITS}
    if limited:
        env.update(LIMITS)
    done = subprocess.run([sys.executable, __file__, "--reference"], env=env,
                          capture_output=True, text=True, check=True)
    return int(done.stdout.split()[-1])


def main():
    if "--reference" in sys.argv:
        check_input()
        work()
        print(thread_count())
        return
    os.environ.update(LIMITS)  # before the runtime starts
    check_input()
    work()
    mine, limited, default = thread_count(), reference_threads(True), reference_threads(False)
    print(f"threads: this process {mine}, fresh with limits {limited}, fresh without {default}")
    report([mine, mine < default], [limited, True])


if __name__ == "__main__":
    main()
