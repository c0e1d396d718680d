"""The twin of tfp402_pkg_imported_device_query_then_threads_bad: the setting comes first, then the
devices are listed through `trainer.devices`. The result checks that the setting took effect.
"""
import tensorflow as tf
from trainer.data import batch, step_total
from trainer.devices import describe_devices

from runtime_probe.support import report

PROBE = {"quick": True, "rule": "TFP402", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 40}


def main():
    tf.config.threading.set_inter_op_parallelism_threads(1)
    print("devices:", describe_devices())
    m = batch(1)
    total = step_total(1)
    report([total, tf.config.threading.get_inter_op_parallelism_threads()], [float((m @ m).sum()), 1], rel_tol=1e-3)


if __name__ == "__main__":
    main()
