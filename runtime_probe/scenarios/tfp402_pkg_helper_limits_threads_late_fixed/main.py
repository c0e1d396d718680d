"""The twin of tfp402_pkg_helper_limits_threads_late_bad: `perfkit.perf.limit_threads()` runs
first, then the model is built and run. The result checks that the setting took effect.
"""
import tensorflow as tf
from perfkit import perf
from perfkit.model import batch, build, score

from runtime_probe.support import report

PROBE = {"rule": "TFP402", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 40}


def main():
    perf.limit_threads()
    model = build()
    total = score(model, 1)
    report([total, tf.config.threading.get_intra_op_parallelism_threads()], [float(batch(1).sum()), 1], rel_tol=1e-3)


if __name__ == "__main__":
    main()
