"""Entry point of a package: logs the devices through `trainer.devices`, then limits TensorFlow's
inter-op threads.

Listing the logical devices in the other module initialises the runtime; the setting after it
raises `RuntimeError: Inter op parallelism cannot be modified after initialization.`
"""
import tensorflow as tf
from trainer.data import batch, step_total
from trainer.devices import describe_devices

from runtime_probe.support import report

PROBE = {
    "quick": True,
    "rule": "TFP402",
    "kind": "bad",
    "expect": {"outcome": "exception", "type": "RuntimeError",
               "match": "Inter op parallelism cannot be modified after initialization", "where": "parent"},
    "timeout": 40,
}


def main():
    tf.config.threading.set_inter_op_parallelism_threads(1)
    print("devices:", describe_devices())
    m = batch(1)
    report(step_total(1), float((m @ m).sum()), rel_tol=1e-3)


if __name__ == "__main__":
    main()
