"""`TF_NUM_INTRAOP_THREADS` / `TF_NUM_INTEROP_THREADS` set in `os.environ` before `import tensorflow`.

The twin of tfp403_thread_env_after_op_bad: the variables are in place before the runtime creates
its thread pools, so the process ends up with the same number of threads as a fresh interpreter
that got them from its parent (`--reference`), and fewer than one without them.
"""
import os
import subprocess
import sys

LIMITS = {"TF_NUM_INTRAOP_THREADS": "1", "TF_NUM_INTEROP_THREADS": "1"}
if "--reference" not in sys.argv:  # a reference run gets its environment from its parent
    os.environ.update(LIMITS)

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"quick": True, "rule": "TFP403", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 60}

SIZE = 768


def thread_count():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    raise RuntimeError("no Threads line in /proc/self/status")


def work():
    m = tf.constant(np.random.default_rng(0).random((SIZE, SIZE), dtype=np.float32))
    return [float(tf.reduce_sum(tf.matmul(m, m))) for _ in range(3)]


def check_input():
    print("input max", float(tf.reduce_max(tf.ones((4, 4)))))


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
    check_input()  # the runtime starts here, with LIMITS already set
    work()
    mine, limited, default = thread_count(), reference_threads(True), reference_threads(False)
    print(f"threads: this process {mine}, fresh with limits {limited}, fresh without {default}")
    report([mine, mine < default], [limited, True])


if __name__ == "__main__":
    main()
