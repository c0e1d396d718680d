"""Record only: threads in the process vs when TF_NUM_INTRAOP_THREADS / TF_NUM_INTEROP_THREADS are set.

Each case is a fresh interpreter: set the two variables (to 1 or 8) before `import tensorflow`,
after it, or after the first op, then run 768x768 matmuls eagerly and in a tf.function. Reports
/proc/self/status Threads after the import, after the first op and at the end, and what
tf.config.threading.get_*_parallelism_threads() return.
"""
import os
import subprocess
import sys

from runtime_probe.support import report

PROBE = {"rule": "TFP403", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 300}


def threads():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("Threads:"))


def case(when, value):
    def setenv():
        os.environ["TF_NUM_INTRAOP_THREADS"] = value
        os.environ["TF_NUM_INTEROP_THREADS"] = value

    if when == "before_import":
        setenv()
    import numpy as np
    import tensorflow as tf

    after_import = threads()
    if when == "after_import":
        setenv()
    m = tf.constant(np.random.default_rng(0).random((768, 768), dtype=np.float32))
    float(tf.reduce_sum(tf.matmul(m, m)))
    after_op = threads()
    if when == "after_op":
        setenv()

    @tf.function
    def both(x):
        return tf.reduce_sum(tf.matmul(x, x)) + tf.reduce_sum(tf.matmul(x, x, transpose_a=True))

    for _ in range(3):
        float(tf.reduce_sum(tf.matmul(m, m)))
        float(both(m))
    print(f"{when:13} {value}: threads after import {after_import}, after first op {after_op}, at end {threads()}; "
          f"get_intra {tf.config.threading.get_intra_op_parallelism_threads()}, "
          f"get_inter {tf.config.threading.get_inter_op_parallelism_threads()}")


def main():
    if len(sys.argv) == 3:
        case(*sys.argv[1:])
        return
    env = {k: v for k, v in os.environ.items() if not k.startswith("TF_NUM_")}
    for when, value in [("unset", "-"), ("before_import", "1"), ("after_import", "1"), ("after_op", "1"),
                        ("before_import", "8"), ("after_op", "8")]:
        done = subprocess.run([sys.executable, __file__, when, value], env=env, capture_output=True, text=True,
                              check=False)
        print(done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-300:], flush=True)
    report(True, True)


if __name__ == "__main__":
    main()
