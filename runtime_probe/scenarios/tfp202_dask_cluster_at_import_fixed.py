"""The same local Dask cluster started under `if __name__ == "__main__":`: the spawned workers
re-import the script without starting it again, and the tasks run."""
import tensorflow as tf
from dask.distributed import Client, LocalCluster

from runtime_probe.support import report

PROBE = {"rule": "TFP202", "kind": "fixed", "requires": ["dask", "distributed"], "timeout": 180}


def norm(seed):
    return float(tf.norm(tf.random.normal((64, 64), seed=seed)))


if __name__ == "__main__":
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None)
    client = Client(cluster)
    norms = client.gather(client.map(norm, range(4)))
    client.close()
    cluster.close()
    report(len(norms), 4)
