"""Record only: pickling an eager-mode tf.queue.FIFOQueue (the scenarios use graph mode)."""
import pickle

import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP101", "kind": "bad", "expect": {"outcome": "exception"}, "timeout": 60}


def main():
    queue = tf.queue.FIFOQueue(4, tf.float32, shapes=[2])
    try:
        pickle.dumps(queue)
        outcome = "pickled"
    except Exception as exc:  # noqa: BLE001 - recording what happens
        outcome = f"{type(exc).__module__}.{type(exc).__name__}: {exc}"
    print(outcome)
    report(outcome, "pickled")


if __name__ == "__main__":
    main()
