"""A local Dask cluster (process workers, the default) started at module level, with no
`if __name__ == "__main__":` guard.

The nanny spawns each worker process, which re-imports the script, starts the cluster again while
bootstrapping and dies (`RuntimeError: An attempt has been made to start a new process before the
current process has finished its bootstrapping phase`); the script ends with `RuntimeError: Nanny
failed to start.`
"""
import tensorflow as tf
from dask.distributed import Client, LocalCluster

from runtime_probe.support import report

PROBE = {
    "rule": "TFP202",
    "kind": "bad",
    "requires": ["dask", "distributed"],
    "expect": {"outcome": "exception", "type": "RuntimeError", "match": "Nanny failed to start", "where": "parent"},
    "timeout": 180,
}


def norm(seed):
    return float(tf.norm(tf.random.normal((64, 64), seed=seed)))


if __name__ == "__main__":
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None)
    client = Client(cluster)
    norms = client.gather(client.map(norm, range(4)))
    client.close()
    cluster.close()
    report(len(norms), 4)
