"""Python's process libraries: what starts a process, a pool or a queue, which methods send to it,
how start methods are fixed, pool sizes and program exits.

Names are canonical (analysis/names.py: `tf.compat.v1.Session` -> `tensorflow.Session`,
`tf.keras.models.load_model` -> `keras.models.load_model`, `multiprocess.Pool` -> `multiprocessing.Pool`).
tests/test_api_knowledge.py checks the names against the installed libraries.
"""

from __future__ import annotations

import enum

from tfproc_lint.knowledge.kinds import Kind
from tfproc_lint.records import record

# --- Processes -------------------------------------------------------------------------------------
PROCESS_CONSTRUCTORS: dict[str, Kind] = {
    "multiprocessing.Pool": Kind.POOL,
    "multiprocessing.Process": Kind.PROCESS,
    "multiprocessing.get_context": Kind.CONTEXT,
    "multiprocessing.Queue": Kind.QUEUE,
    "multiprocessing.SimpleQueue": Kind.QUEUE,
    "multiprocessing.JoinableQueue": Kind.QUEUE,
    "multiprocessing.Pipe": Kind.PIPE_PAIR,
    "multiprocessing.Manager": Kind.MANAGER,
    "multiprocessing.SyncManager": Kind.MANAGER,
    "concurrent.futures.ProcessPoolExecutor": Kind.EXECUTOR,
    "loky.ProcessPoolExecutor": Kind.EXECUTOR,
    "loky.get_reusable_executor": Kind.EXECUTOR,
    "joblib.Parallel": Kind.PARALLEL,
    "pathos.multiprocessing.ProcessPool": Kind.POOL,
    # Process classes of one start method (multiprocessing.context, not exported at the top).
    "multiprocessing.ForkProcess": Kind.PROCESS,
    "multiprocessing.SpawnProcess": Kind.PROCESS,
    "multiprocessing.ForkServerProcess": Kind.PROCESS,
    "concurrent.futures.ThreadPoolExecutor": Kind.THREADS,
    "multiprocessing.ThreadPool": Kind.THREADS,
    "threading.Thread": Kind.THREADS,
    "pathos.serial.SerialPool": Kind.THREADS,  # runs every task in the calling process
}
THREAD_PREFIXES = ("multiprocessing.dummy.", "pathos.threading.")
PROCESS_CLASS_START_METHODS = {
    "multiprocessing.ForkProcess": "fork",
    "multiprocessing.SpawnProcess": "spawn",
    "multiprocessing.ForkServerProcess": "forkserver",
}
# Names a process library exports for a class that lives elsewhere (`pathos.multiprocessing.Pool`
# is `multiprocess.pool.Pool`, not pathos's own ProcessPool); names.canonical() follows them, then
# its prefixes. tests/test_api_knowledge.py checks that each pair names one object, and that
# every public pool, process and executor class of the supported libraries is covered.
PROCESS_ALIASES = {
    "pathos.multiprocessing.Pool": "multiprocess.pool.Pool",
    "pathos.helpers.ProcessPool": "multiprocess.pool.Pool",
    "pathos.pools._ProcessPool": "multiprocess.pool.Pool",
    "pathos.multiprocessing.ThreadPool": "multiprocess.dummy.Pool",
    "pathos.helpers.ThreadPool": "multiprocess.dummy.Pool",
    "pathos.pools._ThreadPool": "multiprocess.dummy.Pool",
    "pathos.multiprocessing.ProcessingPool": "pathos.multiprocessing.ProcessPool",
    "pathos.pools.ProcessPool": "pathos.multiprocessing.ProcessPool",
    "pathos.multiprocessing.ThreadingPool": "pathos.threading.ThreadPool",
    "pathos.pools.ThreadPool": "pathos.threading.ThreadPool",
    "pathos.pools.SerialPool": "pathos.serial.SerialPool",
    "pathos.serial.PythonSerial": "pathos.serial.SerialPool",
    "pathos.python.SerialPool": "pathos.serial.SerialPool",
    "pathos.pools.ParallelPool": "pathos.parallel.ParallelPool",
    "pathos.parallel.ParallelPythonPool": "pathos.parallel.ParallelPool",
    "joblib.parallel.Parallel": "joblib.Parallel",
}
# joblib ships loky inside it: the same API under another package name.
PROCESS_PREFIX_ALIASES = (("joblib.externals.loky.", "loky."),)
PROCESS_BASES: dict[str, Kind] = {
    "multiprocessing.Process": Kind.PROCESS,
    "multiprocessing.Pool": Kind.POOL,
    "concurrent.futures.ProcessPoolExecutor": Kind.EXECUTOR,
    "concurrent.futures.ThreadPoolExecutor": Kind.THREADS,
    "multiprocessing.ThreadPool": Kind.THREADS,
    "threading.Thread": Kind.THREADS,
}
# Context classes (`class C(multiprocessing.context.ForkContext)`) and their start methods.
CONTEXT_CLASSES = {
    "multiprocessing.ForkContext": "fork",
    "multiprocessing.SpawnContext": "spawn",
    "multiprocessing.ForkServerContext": "forkserver",
    "multiprocessing.DefaultContext": "default",
}
CONTEXT_METHODS: dict[str, Kind] = {
    "Pool": Kind.POOL,
    "Process": Kind.PROCESS,
    "Queue": Kind.QUEUE,
    "SimpleQueue": Kind.QUEUE,
    "JoinableQueue": Kind.QUEUE,
    "Pipe": Kind.PIPE_PAIR,
    "Manager": Kind.MANAGER,
}
MANAGER_QUEUES = frozenset({"Queue", "JoinableQueue"})
# Methods of Manager proxies that send their argument to the manager process (pickled).
PROXY_SENDING_METHODS = frozenset({"append", "extend", "insert", "update", "setdefault", "__setitem__", "set"})
SET_START_METHOD = "multiprocessing.set_start_method"
GET_CONTEXT = "multiprocessing.get_context"
GET_START_METHOD = "multiprocessing.get_start_method"
# Calls on the default context that fix its start method: a later `set_start_method()` without
# `force=True` raises `RuntimeError: context has already been set` (measured here). So do
# `get_context()` without a method, `get_start_method()` without `allow_none=True`, a default
# `Process.start()` and a `ProcessPoolExecutor` without `mp_context`; `get_context("spawn")`,
# `Pipe()` and a `Process` that is only constructed do not.
CONTEXT_FIXING_CALLS = frozenset({
    "multiprocessing.Pool", "multiprocessing.Queue", "multiprocessing.SimpleQueue", "multiprocessing.JoinableQueue",
    "multiprocessing.Manager", "multiprocessing.Lock", "multiprocessing.RLock", "multiprocessing.Semaphore",
    "multiprocessing.BoundedSemaphore", "multiprocessing.Condition", "multiprocessing.Event",
    "multiprocessing.Barrier", "multiprocessing.Value", "multiprocessing.Array", "multiprocessing.set_start_method",
})
FORK_CALLS = frozenset({"os.fork", "os.forkpty"})
# Library pools that pickle with dill (lambdas and closures travel) or cloudpickle.
DILL_POOL_MODULES = ("multiprocess.", "pathos.")
# joblib backends that start no process.
JOBLIB_IN_PROCESS_BACKENDS = frozenset({"threading", "sequential", "dask"})
# Keras data workers: `use_multiprocessing=True` with `workers=N` starts processes.
KERAS_WORKER_METHODS = frozenset({"fit", "fit_generator", "predict", "predict_generator", "evaluate",
                                  "evaluate_generator"})
KERAS_DATASET_BASES = frozenset({"keras.utils.PyDataset", "keras.utils.Sequence", "keras.utils.data_utils.Sequence"})

# --- What a pool, a queue and an executor send (analysis/routes.py) -------------------------------


class TaskData(enum.Enum):
    """How a pool method is given its tasks' data."""

    ITERABLE = "iterable"  # one task per item: pool.map(f, items)
    STAR_ITERABLE = "star_iterable"  # one task per item, unpacked into arguments: pool.starmap(f, pairs)
    ARGS = "args"  # one task, with an args tuple and a kwds dict: pool.apply(f, args, kwds)
    STAR_ARGS = "star_args"  # one task, its arguments given one by one: pathos's pool.pipe(f, *args)


@record
class PoolTaskMethod:
    callable_index: int  # the function the tasks run
    data_index: int  # the iterable, or the args tuple
    data: TaskData

    @property
    def per_item(self) -> bool:
        """One task per item of an iterable (map, imap, starmap, ...), not one task per call."""
        return self.data in (TaskData.ITERABLE, TaskData.STAR_ITERABLE)


POOL_TASK_METHODS: dict[str, PoolTaskMethod] = {
    "map": PoolTaskMethod(0, 1, TaskData.ITERABLE),
    "imap": PoolTaskMethod(0, 1, TaskData.ITERABLE),
    "imap_unordered": PoolTaskMethod(0, 1, TaskData.ITERABLE),
    "map_async": PoolTaskMethod(0, 1, TaskData.ITERABLE),
    "starmap": PoolTaskMethod(0, 1, TaskData.STAR_ITERABLE),
    "starmap_async": PoolTaskMethod(0, 1, TaskData.STAR_ITERABLE),
    "apply": PoolTaskMethod(0, 1, TaskData.ARGS),
    "apply_async": PoolTaskMethod(0, 1, TaskData.ARGS),
    # pathos pools
    "amap": PoolTaskMethod(0, 1, TaskData.ITERABLE),
    "uimap": PoolTaskMethod(0, 1, TaskData.ITERABLE),
    "pipe": PoolTaskMethod(0, 1, TaskData.STAR_ARGS),
    "apipe": PoolTaskMethod(0, 1, TaskData.STAR_ARGS),
}
# Pool methods that run one task per item (TFP303 reads the item as a row).
POOL_MAP_METHODS = frozenset(name for name, method in POOL_TASK_METHODS.items() if method.per_item)
# Pool and executor methods whose every call submits one task (TFP301, TFP302, TFP303).
ONE_TASK_METHODS = frozenset({"apply", "apply_async", "submit"})
# What a process pool executor sends: `submit(f, *args, **kwargs)`, `map(f, *iterables)`.
EXECUTOR_TASK_METHODS = frozenset({"submit", "map"})
# Queue methods that send their argument (pickled by the queue's feeder thread).
QUEUE_PUT_METHODS = frozenset({"put", "put_nowait"})

# --- Pool sizes (TFP302) ---------------------------------------------------------------------------
# Where a pool takes its worker count (position, keyword); absent or None means one worker per CPU.
POOL_SIZE_ARGUMENTS: dict[str, tuple[int, str]] = {
    "multiprocessing.Pool": (0, "processes"),
    "concurrent.futures.ProcessPoolExecutor": (0, "max_workers"),
    "loky.ProcessPoolExecutor": (0, "max_workers"),
    "loky.get_reusable_executor": (0, "max_workers"),
}
CPU_COUNT_CALLS = frozenset({"os.cpu_count", "multiprocessing.cpu_count", "joblib.cpu_count", "psutil.cpu_count"})

# --- Program exits ------------------------------------------------------------------------------------
PROCESS_EXITS = frozenset({"sys.exit", "os._exit", "os.abort", "builtins.exit", "builtins.quit"})
BUILTIN_EXITS = frozenset({"exit", "quit"})
