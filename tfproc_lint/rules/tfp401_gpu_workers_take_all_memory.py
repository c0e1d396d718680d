"""TFP401: several worker processes run TensorFlow on a GPU and none limits its GPU memory."""

from __future__ import annotations

import libcst as cst

from tfproc_lint.analysis import engine_gpus, engines
from tfproc_lint.analysis.file_analysis import FileAnalysis
from tfproc_lint.analysis.gpu_workers import GpuWorkerGroup, GroupKind, gpu_worker_groups
from tfproc_lint.analysis.settings import gpu_evidence
from tfproc_lint.fixes.memory_growth import TurnOnMemoryGrowth
from tfproc_lint.knowledge import engines as engine_knowledge
from tfproc_lint.rules.base import Example, Finding, Report, Rule, finding, shown, worded

_OUT_OF_MEMORY = "CUDA_ERROR_OUT_OF_MEMORY (ResourceExhaustedError)"


@finding
class WorkersTakeAllMemory(Finding):
    """A pool with several workers, several processes run together, or processes started in a loop."""

    noun: str | None = worded()  # the pool's maker; None for Processes
    count: int | None  # the pool's workers, where the code says (else "several")
    processes: int  # Processes run together (1: one started in a loop)
    lines: tuple[int, ...] = shown()  # where they are made
    evidence: str = worded()  # why a GPU is there (or assumed)

    def message(self) -> str:
        if self.noun is not None:
            who = f"{self.noun} runs TensorFlow in {self.count or 'several'} worker processes"
        elif self.processes > 1:
            who = f"{self.processes} processes (lines {', '.join(map(str, self.lines))}) run TensorFlow"
        else:
            who = "processes started in a loop run TensorFlow"
        return (f"{who} on a GPU ({_evidence(self.evidence)}) and none limits its GPU memory: each maps nearly all "
                f"memory of every visible GPU, so the second can fail with {_OUT_OF_MEMORY}; in each worker, before "
                "its first op, turn on tf.config.experimental.set_memory_growth for every GPU (or set a "
                "memory_limit, or give each worker its own GPU with CUDA_VISIBLE_DEVICES)")


@finding
class RayFractionalGpus(Finding):
    what: str  # task or actor
    name: str = shown()
    num_gpus: str = worded()  # as spelled, with its value where it is a name

    def message(self) -> str:
        where = "actor's __init__" if self.what == "actor" else "task"
        return (f"Ray {self.what} `{self.name}` asks for num_gpus={self.num_gpus}, so Ray runs several on one GPU, "
                "and none limits its GPU memory: the first to start maps nearly all of it and the next fails with "
                f"{_OUT_OF_MEMORY}; in the {where}, before its first op, turn on "
                "tf.config.experimental.set_memory_growth or set a memory_limit")


@finding
class SparkGpuShare(Finding):
    amount: str = worded()  # as spelled
    tasks: str  # how many tasks share one GPU
    function: str = shown()

    def message(self) -> str:
        return (f"{engine_knowledge.SPARK_TASK_GPU_AMOUNT}={self.amount} lets Spark run up to {self.tasks} tasks "
                f"on one GPU at once, and `{self.function}` runs TensorFlow there with no GPU memory limit: the "
                f"first task to start maps nearly all of the GPU's memory and the next fails with {_OUT_OF_MEMORY}; "
                "in the task function, before its first op, turn on tf.config.experimental.set_memory_growth or set "
                "a memory_limit")


@finding
class EngineSession(Finding):
    session: str = shown()
    function: str = shown()
    evidence: str = worded()

    def message(self) -> str:
        return (f"`{self.session}` makes a TF1 session in `{self.function}`, which runs in the engine's worker "
                f"processes, with no GPU memory option, on a GPU ({_evidence(self.evidence)}): each worker process "
                "that runs it maps nearly all memory of every visible GPU, so the next fails with "
                f"{_OUT_OF_MEMORY}; give the session "
                "`config=tf.compat.v1.ConfigProto(gpu_options=tf.compat.v1.GPUOptions(allow_growth=True))`")


@finding
class RayZeroGpuWorker(Finding):
    what: str  # task or actor
    name: str = shown()
    other: str  # task or actor: the one that asks for GPUs
    other_name: str = shown()
    num_gpus: str = worded()

    def message(self) -> str:
        return (f"Ray {self.what} `{self.name}` asks for no GPU and runs TensorFlow, next to the {self.other} "
                f"`{self.other_name}` that asks for num_gpus={self.num_gpus}: Ray leaves the node's "
                "CUDA_VISIBLE_DEVICES to zero-GPU workers (measured on Ray 2.60), so on a GPU node its TensorFlow "
                f"sees the GPUs and maps nearly all their memory, and the GPU {self.other} can fail with "
                f"{_OUT_OF_MEMORY}; in the {self.what}, before its first op, hide the GPUs "
                "(tf.config.set_visible_devices([], 'GPU')) or turn on memory growth, or start Ray with "
                "RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO=1")


@finding
class DaskGpuCluster(Finding):
    workers: int
    task: str = shown()

    def message(self) -> str:
        return (f"The {self.workers} worker processes of this local Dask cluster each advertise a GPU "
                f"(resources={{'GPU': ...}}) on the same machine, and the task `{self.task}` runs TensorFlow there "
                "with no GPU memory limit: the first worker to run it maps nearly all memory of every GPU and the "
                f"others fail with {_OUT_OF_MEMORY}; in the task (or a WorkerPlugin's setup), before the first op, "
                "turn on tf.config.experimental.set_memory_growth, or run one worker per GPU (dask-cuda's "
                "LocalCUDACluster)")


class GpuWorkersTakeAllMemory(Rule):
    code = "TFP401"
    name = "gpu-workers-take-all-memory"
    summary = "several TensorFlow worker processes on a GPU, none of which limits its GPU memory"
    fix_availability = "sometimes"
    what_it_does = (
        "Reports a pool, executor or joblib `Parallel` with more than one worker, or several "
        "`Process`es (or one started in a loop), whose workers run TensorFlow (TFP201's test) when "
        "the code uses a GPU and no worker limits its GPU memory. GPU use must be evident: a GPU "
        "device string given to TensorFlow (`tf.device(\"/GPU:0\")`, "
        "`tf.config.list_physical_devices(\"GPU\")`), a GPU query (`tf.test.is_gpu_available()`), "
        "a project dependency on a GPU build (`tensorflow[and-cuda]`, `tensorflow-gpu` in "
        "pyproject.toml, setup.cfg or requirements*.txt), or the `assume-gpu` option (`assume-gpu = "
        "true` in `[tool.tfproc-lint]`, `--assume-gpu`), which turns the rule on for code that "
        "shows no GPU of its own. A worker limits its memory with "
        "`tf.config.experimental.set_memory_growth`, `set_logical_device_configuration` (a "
        "`memory_limit`), `set_visible_devices`, `CUDA_VISIBLE_DEVICES` / "
        "`TF_FORCE_GPU_ALLOW_GROWTH` (which also pin workers to the CPU), or TF1 `GPUOptions` "
        "(`allow_growth`, `per_process_gpu_memory_fraction`), done in the worker's code, at import, "
        "in the environment, or anywhere in a fork parent (inherited)."
    )
    why_bad = (
        "By default TensorFlow maps nearly all memory of every visible GPU when its runtime starts in "
        "a process. The first worker takes the GPU; the next ones fail with "
        "`CUDA_ERROR_OUT_OF_MEMORY` or `ResourceExhaustedError` (or crawl with what is left), "
        "depending on the sizes: a pool that works with one worker fails with two."
    )
    known_problems = (
        "A memory limit anywhere the workers may inherit it silences the rule, even a "
        "`CUDA_VISIBLE_DEVICES` that gives every worker the same GPU. Workers whose TensorFlow code "
        "lives in another module, and a pool sized by a variable that is 1 at run time, are not "
        "told apart. GPU use that the file does not show needs `assume-gpu`."
    )
    fix_safety = (
        "The fix turns on memory growth for every GPU first thing in the pool's (or executor's) "
        "`initializer` (creating `_init_gpu_memory` when there is none) or the `Process` target. It "
        "is unsafe: each worker now allocates GPU memory as it goes, which fragments it and can be "
        "slower, and a worker forked after the parent used the GPU cannot change the setting (the "
        "fix is withdrawn then, since TFP402 would report it). TF1 sessions, joblib and Keras "
        "workers: manual edit required."
    )
    evidence = (
        "GPU scenarios (run only where a GPU exists, \"skipped: no GPU\" elsewhere): two spawn workers "
        "that each hold a 4 GiB block on one GPU with the default memory policy (expected: the "
        "second fails with ResourceExhaustedError); the same with memory growth in the initializer, "
        "with a logical device memory limit, with one CUDA_VISIBLE_DEVICES per worker (two GPUs), "
        "and the auto-fixed scenario (expected: ok). Reported by users: tensorflow/tensorflow#14231, "
        "#47863; the TensorFlow GPU guide."
    )
    references = (
        "https://www.tensorflow.org/guide/gpu#limiting_gpu_memory_growth",
        "https://github.com/tensorflow/tensorflow/issues/47863",
        "https://github.com/tensorflow/tensorflow/issues/14231",
        "https://github.com/openai/baselines/issues/70",
    )
    engines = (
        "Ray: a task or actor declared with a fractional GPU (`@ray.remote(num_gpus=0.5)`, or "
        "`.options(num_gpus=0.5)`, the share written as a literal, a module constant or a local variable "
        "bound once (a module constant of this module or, with project analysis, of another module of the "
        "project: `config.GPU_SHARE`), or a config class's attribute set once in its body and nowhere else) "
        "that runs TensorFlow with no memory limit in its own code. Ray packs several such workers onto "
        "one GPU and does not limit their memory; code the driver runs does not reach them. A share from "
        "a parameter, a command-line option, an attribute also assigned at run time or a name bound more "
        "than once is not read. Spark: "
        "`spark.task.resource.gpu.amount` below 1 (`SparkSession.builder.config(...)` or "
        "`SparkConf().set(...)`), where a partition function or UDF given to Spark in the same function "
        "runs TensorFlow with no memory limit in its own code, at import, or in the executors' environment "
        "(`spark.executorEnv.TF_FORCE_GPU_ALLOW_GROWTH`): Spark runs several tasks on one GPU and does not "
        "limit their memory. Ray also: a task or actor that asks for no GPU and runs TensorFlow, in a file "
        "whose other tasks or actors ask for GPUs: Ray 2.60 leaves the node's `CUDA_VISIBLE_DEVICES` to "
        "zero-GPU workers (runtime-facts §7), so its TensorFlow maps the GPU memory the GPU workers need. "
        "Dask: a `LocalCluster` (or `Client`) of 2 or more worker processes (`n_workers=` a literal) that "
        "each advertise a GPU (`resources={\"GPU\": ...}`), whose tasks run TensorFlow: LocalCluster gives "
        "every worker the same GPUs. Any engine: a TF1 `Session` made in a task function (a Spark or Dask "
        "task, a Ray task or actor with no `num_gpus`) on a GPU the file shows (as for pools), with no "
        "`gpu_options` memory option (`allow_growth=False` counts as none). These three stay silent when "
        "the file limits GPU memory anywhere, names `CUDA_VISIBLE_DEVICES`, `TF_FORCE_GPU_ALLOW_GROWTH` or "
        "`RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO` in a string (a `runtime_env`), or gives a session "
        "`device_count`. No automatic fix (manual edit required): turn on memory growth in the task, or "
        "in the actor's `__init__`, before the first op. Example (Ray):"
    )
    options = ("assume-start-method", "target-python", "assume-gpu")
    bad_examples = (
        Example(
            """\
            import multiprocessing as mp
            import tensorflow as tf

            def embed(path):
                with tf.device('/GPU:0'):
                    image = tf.io.decode_jpeg(tf.io.read_file(path))
                    return tf.reduce_mean(tf.cast(image, tf.float32)).numpy()

            if __name__ == '__main__':
                with mp.get_context('spawn').Pool(4) as pool:
                    print(pool.map(embed, ['a.jpg', 'b.jpg']))
            """,
            ("TFP401",),
            fixed="""\
            import multiprocessing as mp
            import tensorflow as tf

            def embed(path):
                with tf.device('/GPU:0'):
                    image = tf.io.decode_jpeg(tf.io.read_file(path))
                    return tf.reduce_mean(tf.cast(image, tf.float32)).numpy()

            def _init_gpu_memory():
                for gpu in tf.config.list_physical_devices("GPU"):
                    tf.config.experimental.set_memory_growth(gpu, True)


            if __name__ == '__main__':
                with mp.get_context('spawn').Pool(4, initializer=_init_gpu_memory) as pool:
                    print(pool.map(embed, ['a.jpg', 'b.jpg']))
            """,
        ),
        Example(
            """\
            import multiprocessing as mp
            import tensorflow as tf

            def embed(path):
                image = tf.io.decode_jpeg(tf.io.read_file(path))
                return tf.reduce_mean(tf.cast(image, tf.float32)).numpy()

            if __name__ == '__main__':
                with mp.get_context('spawn').Pool(4) as pool:
                    print(pool.map(embed, ['a.jpg', 'b.jpg']))
            """,
            ("TFP401",),
            config=(("assume-gpu", "true"),),
            fixed="""\
            import multiprocessing as mp
            import tensorflow as tf

            def embed(path):
                image = tf.io.decode_jpeg(tf.io.read_file(path))
                return tf.reduce_mean(tf.cast(image, tf.float32)).numpy()

            def _init_gpu_memory():
                for gpu in tf.config.list_physical_devices("GPU"):
                    tf.config.experimental.set_memory_growth(gpu, True)


            if __name__ == '__main__':
                with mp.get_context('spawn').Pool(4, initializer=_init_gpu_memory) as pool:
                    print(pool.map(embed, ['a.jpg', 'b.jpg']))
            """,
        ),
        Example(
            """\
            import ray
            import tensorflow as tf

            @ray.remote(num_gpus=0.5)
            class Trainer:
                def __init__(self):
                    self.model = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(10)])
            """,
            ('TFP401',),
        ),
    )
    good_examples = (
        Example(
            """\
            import multiprocessing as mp
            import tensorflow as tf

            def grow():
                for gpu in tf.config.list_physical_devices('GPU'):
                    tf.config.experimental.set_memory_growth(gpu, True)

            def embed(path):
                with tf.device('/GPU:0'):
                    image = tf.io.decode_jpeg(tf.io.read_file(path))
                    return tf.reduce_mean(tf.cast(image, tf.float32)).numpy()

            if __name__ == '__main__':
                with mp.get_context('spawn').Pool(4, initializer=grow) as pool:
                    print(pool.map(embed, ['a.jpg', 'b.jpg']))
            """
        ),
        Example(  # nothing shows a GPU: set assume-gpu to report such code
            """\
            import multiprocessing as mp
            import tensorflow as tf

            def embed(path):
                image = tf.io.decode_jpeg(tf.io.read_file(path))
                return tf.reduce_mean(tf.cast(image, tf.float32)).numpy()

            if __name__ == '__main__':
                with mp.get_context('spawn').Pool(4) as pool:
                    print(pool.map(embed, ['a.jpg', 'b.jpg']))
            """
        ),
        Example(
            """\
            import ray
            import tensorflow as tf

            @ray.remote(num_gpus=0.5)
            class Trainer:
                def __init__(self):
                    for gpu in tf.config.list_physical_devices('GPU'):
                        tf.config.experimental.set_memory_growth(gpu, True)
                    self.model = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(10)])
            """
        ),
    )

    def check_file(self, analysis: FileAnalysis):
        yield from self._ray_fractional_gpus(analysis)
        yield from self._spark_gpu_share(analysis)
        yield from self._engine_sessions(analysis)
        yield from self._ray_zero_gpu_workers(analysis)
        yield from self._dask_gpu_clusters(analysis)
        groups = gpu_worker_groups(analysis)
        if not groups:
            return
        evidence = gpu_evidence(analysis)
        if not evidence:
            return
        for group in groups:
            yield self._report(analysis, group, evidence)

    def _report(self, analysis: FileAnalysis, group: GpuWorkerGroup, evidence: str) -> Report:
        owner = group.owner
        pool = group.kind is GroupKind.POOL
        return Report(
            owner.construction,
            WorkersTakeAllMemory(owner.noun if pool else None, group.workers if pool else None,
                                 len(group.owners) if group.kind is GroupKind.PROCESSES else 1,
                                 tuple(analysis.line_of(o.construction) for o in group.owners), evidence),
            fix=TurnOnMemoryGrowth(list(group.owners)),
        )

    @staticmethod
    def _ray_fractional_gpus(analysis: FileAnalysis):
        for found in engine_gpus.ray_gpu_shares(analysis):
            what = "task" if engines.is_function(found.info) else "actor"
            spelled = analysis.code(found.gpus, 20)
            if isinstance(found.gpus, (cst.Name, cst.Attribute)):
                spelled += f" ({found.value:g})"
            yield Report(
                found.gpus,
                RayFractionalGpus(what, found.info.node.name.value, spelled),
            )

    @staticmethod
    def _spark_gpu_share(analysis: FileAnalysis):
        found = engine_gpus.spark_gpu_share(analysis)
        if found is None:
            return
        yield Report(
            found.setting.value,
            SparkGpuShare(analysis.code(found.setting.value, 20), _tasks_per_gpu(found.value),
                          found.function.node.name.value),
        )

    @staticmethod
    def _engine_sessions(analysis: FileAnalysis):
        """Only where the file shows a GPU (or `assume-gpu`): each worker process maps nearly all GPU memory."""
        found = engine_gpus.session_tasks(analysis)
        evidence = gpu_evidence(analysis) if found else ""
        if not evidence:
            return
        for task in found:
            yield Report(
                task.session,
                EngineSession(analysis.code(task.session, 40), task.function.node.name.value, evidence),
            )

    @staticmethod
    def _ray_zero_gpu_workers(analysis: FileAnalysis):
        """A Ray task or actor with no `num_gpus` that runs TensorFlow, in a file whose other
        tasks or actors ask for GPUs: Ray 2.60 leaves the node's CUDA_VISIBLE_DEVICES to it."""
        for found in engine_gpus.ray_zero_gpu_workers(analysis):
            what = "task" if engines.is_function(found.info) else "actor"
            other = "task" if engines.is_function(found.gpu_info) else "actor"
            yield Report(
                found.info.node.name,
                RayZeroGpuWorker(what, found.info.node.name.value, other, found.gpu_info.node.name.value,
                                 analysis.code(found.gpus, 20)),
            )

    @staticmethod
    def _dask_gpu_clusters(analysis: FileAnalysis):
        """A local Dask cluster of several worker processes that each advertise a GPU, whose tasks
        run TensorFlow with no GPU memory limit."""
        for found in engine_gpus.dask_gpu_clusters(analysis):
            yield Report(
                found.cluster,
                DaskGpuCluster(found.workers, found.task.node.name.value),
            )


def _tasks_per_gpu(value: float) -> str:
    """`0.25` -> "4"; a share that does not divide one GPU evenly -> "several"."""
    count = round(1 / value)
    return str(count) if abs(count * value - 1) < 1e-9 else "several"


def _evidence(evidence: str) -> str:
    if evidence.startswith("`"):
        return evidence
    return f"GPU assumed: {evidence}"
