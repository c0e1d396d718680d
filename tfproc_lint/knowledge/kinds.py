"""The kinds of object the analysis tells apart (analysis/kinds.py adds the groups the rules ask about)."""

from __future__ import annotations

import enum


class Kind(enum.Enum):
    UNKNOWN = "unknown"
    NONE = "None"
    DATA = "data"
    MODULE = "module"
    FUNCTION = "function"  # a def in this file
    CLASS = "class"  # a class defined in this file
    INSTANCE = "instance"  # an instance of a class defined in this file
    # TensorFlow runtime state
    SESSION = "session"
    GRAPH = "graph"
    TF_FUNCTION = "tf.function"
    DATASET = "dataset"
    SAVED_MODEL = "saved_model"
    KERAS_MODEL = "keras_model"
    ESTIMATOR = "estimator"  # tf.estimator (TF1/2.15-): runs sessions in train/evaluate/predict
    # processes
    CONTEXT = "context"
    POOL = "pool"
    EXECUTOR = "executor"
    PROCESS = "process"
    PARALLEL = "parallel"  # joblib.Parallel: a pool called with `delayed(f)(...)` tasks
    THREADS = "threads"  # thread pools, threads: never a process boundary
    QUEUE = "queue"
    PIPE_PAIR = "pipe_pair"
    CONNECTION = "connection"
    MANAGER = "manager"
    PROXY = "proxy"
    ENGINE = "engine"  # Ray, Dask, Spark: the engine's own workers (analysis/engines/)
