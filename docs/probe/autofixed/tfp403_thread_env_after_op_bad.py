"""`TF_NUM_INTRAOP_THREADS` / `TF_NUM_INTEROP_THREADS` set in `os.environ` after the first op: ignored.

TensorFlow reads the two variables once, when the runtime creates its thread pools at the first op.
This script checks its input with a TF op first, then asks for one thread of each kind, then does
its real work. Observable: the number of threads in the process, compared with fresh interpreters
doing the same work (`--reference`) with the variables from the start and without them: it matches
the one without; the late setting had no effect. (`tf.config.threading.get_intra_op_parallelism_
threads()` is no observable: it returns 0 whether or not the variables took effect.)
"""
import os
import subprocess
import sys

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"quick": True, "rule": "TFP403", "kind": "bad", "expect": {"outcome": "wrong result"}, "timeout": 60}

LIMITS = {"TF_NUM_INTRAOP_THREADS": "1", "TF_NUM_INTEROP_THREADS": "1"}
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
    os.environ.update(LIMITS)  # too late
    check_input()  # the runtime starts here
    work()
    mine, limited, default = thread_count(), reference_threads(True), reference_threads(False)
    print(f"threads: this process {mine}, fresh with limits {limited}, fresh without {default}")
    report([mine, mine < default], [limited, True])


if __name__ == "__main__":
    main()
