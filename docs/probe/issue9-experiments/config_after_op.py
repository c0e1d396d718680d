"""Record only: the configuration calls after the first op, including "setting" the default value."""
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP402", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 60}


def attempt(label, call):
    try:
        call()
        print(f"{label}: accepted")
    except Exception as exc:  # noqa: BLE001 - recording what happens
        print(f"{label}: {type(exc).__name__}: {exc}")


def main():
    print("first op", float(tf.reduce_sum(tf.ones((4, 4)))))
    cpu = tf.config.list_physical_devices("CPU")[0]
    two = [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()]
    attempt("set_intra_op_parallelism_threads(1)", lambda: tf.config.threading.set_intra_op_parallelism_threads(1))
    attempt("set_intra_op_parallelism_threads(0) (the default)",
            lambda: tf.config.threading.set_intra_op_parallelism_threads(0))
    attempt("set_inter_op_parallelism_threads(1)", lambda: tf.config.threading.set_inter_op_parallelism_threads(1))
    attempt("set_logical_device_configuration(cpu, 2 CPUs)",
            lambda: tf.config.set_logical_device_configuration(cpu, two))
    attempt("set_visible_devices([], 'GPU')", lambda: tf.config.set_visible_devices([], "GPU"))
    print("get_intra", tf.config.threading.get_intra_op_parallelism_threads(),
          "get_inter", tf.config.threading.get_inter_op_parallelism_threads())
    report(True, True)


if __name__ == "__main__":
    main()
