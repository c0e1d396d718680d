"""`os.fork()` by hand when the parent only imported TensorFlow; the child multiplies 768x768 matrices.

The twin of tfp201_os_fork_bad: the parent checks its input with numpy instead of a TF op, so the
runtime starts in the child, which gets its own thread pools.
"""
import os
import struct

import numpy as np
import tensorflow as tf

from runtime_probe.support import report

PROBE = {"rule": "TFP201", "kind": "fixed", "expect": {"outcome": "ok"}, "timeout": 60}

SIZE = 768


def matrix(seed):
    return np.random.default_rng(seed).random((SIZE, SIZE), dtype=np.float32)


def square_sum(seed):
    m = tf.constant(matrix(seed))
    return float(tf.reduce_sum(tf.matmul(m, m)))


def main():
    print("parent checksum", float(matrix(0).sum()))
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(read_end)
        try:
            os.write(write_end, struct.pack("d", square_sum(1)))
        finally:
            os._exit(0)
    os.close(write_end)
    _, status = os.waitpid(pid, 0)
    with os.fdopen(read_end, "rb") as reader:
        data = reader.read()
    total = struct.unpack("d", data)[0] if data else None
    report([total, os.waitstatus_to_exitcode(status)], [float((matrix(1) @ matrix(1)).sum()), 0], rel_tol=1e-3)


if __name__ == "__main__":
    main()
