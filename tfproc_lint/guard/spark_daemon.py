"""Spark's Python daemon with the guard installed (`spark.python.daemon.module`): the daemon forks
the Python workers, which inherit the guard (engine_workers.py)."""

from tfproc_lint.guard import setup_engine_worker

setup_engine_worker()

if __name__ == "__main__":
    from pyspark import daemon

    daemon.manager()
