"""Entry point of a package: `trainer.checks` checks the input with a TensorFlow op, then the entry
asks for one intra-op and one inter-op thread through `os.environ`: ignored.

TensorFlow reads `TF_NUM_INTRAOP_THREADS` / `TF_NUM_INTEROP_THREADS` once, when the runtime creates
its thread pools, which the other module's op did. Observable, as in tfp403_thread_env_after_op_bad:
the process's thread count compared with fresh interpreters doing the same work (`--reference`)
with the variables from the start and without them; it matches the one without.
"""
import os
import subprocess
import sys

from trainer.checks import check_input
from trainer.work import thread_count, work

from runtime_probe.support import report

PROBE = {"rule": "TFP403", "kind": "bad", "expect": {"outcome": "wrong result"}, "timeout": 60}

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
    os.environ.update(LIMITS)  # too late
    check_input()  # the runtime starts here, in the other module
    work()
    mine, limited, default = thread_count(), reference_threads(True), reference_threads(False)
    print(f"threads: this process {mine}, fresh with limits {limited}, fresh without {default}")
    report([mine, mine < default], [limited, True])


if __name__ == "__main__":
    main()
