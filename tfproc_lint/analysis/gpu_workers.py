"""Worker processes that may share the GPUs with no memory limit (TFP401): a pool, executor, joblib
`Parallel` or Keras data workers of more than one worker, processes made in a loop, or processes that
run at the same time, whose workers run TensorFlow and which no GPU memory limit reaches (in their
code, at import, in the environment, or anywhere in a fork parent). Whether the code uses a GPU at
all is `settings.gpu_evidence`; the engines' workers are engine_gpus.py's."""

from __future__ import annotations

from enum import Enum

import libcst as cst

from tfproc_lint.analysis.kinds import Kind
from tfproc_lint.analysis.settings import memory_limits, worker_nodes
from tfproc_lint.analysis.values import argument, keyword
from tfproc_lint.analysis.walk import calls_in
from tfproc_lint.analysis.workers import Owner
from tfproc_lint.records import record


class GroupKind(Enum):
    POOL = "pool"  # a pool, executor, joblib Parallel or Keras data workers: `workers` of them
    PROCESS_LOOP = "processes made in a loop"
    PROCESSES = "processes that run at the same time"


@record
class GpuWorkerGroup:
    """Worker processes that run TensorFlow together with no GPU memory limit reaching them."""

    kind: GroupKind
    owners: tuple[Owner, ...]  # the pool, or the processes in the order they are made
    workers: int | None = None  # a pool's worker count written as a literal

    @property
    def owner(self) -> Owner:
        """The one made first: where the finding goes."""
        return self.owners[0]


def gpu_worker_groups(analysis) -> list[GpuWorkerGroup]:
    """The pools and processes whose workers run TensorFlow together, unlimited, in source order,
    processes that run at the same time last (the first such group only)."""
    found: list[GpuWorkerGroup] = []
    single_processes: list[Owner] = []
    order = analysis.symbols.order_of_node
    for owner in sorted(analysis.owners.values(), key=lambda o: order.get(o.construction, 0)):
        if owner.value.kind is Kind.THREADS or owner.value.detail == "os.fork":
            continue
        if owner.value.kind is not Kind.PROCESS and worker_count(owner) == 1:
            continue
        if not analysis.tf.owner_runs_tensorflow(owner) or _limited(analysis, owner):
            continue
        if owner.value.kind is not Kind.PROCESS:
            found.append(GpuWorkerGroup(GroupKind.POOL, (owner,), worker_count(owner)))
        elif _in_loop(analysis, owner):
            found.append(GpuWorkerGroup(GroupKind.PROCESS_LOOP, (owner,)))
        else:
            single_processes.append(owner)
    group = _running_together(analysis, single_processes)
    if len(group) >= 2:
        found.append(GpuWorkerGroup(GroupKind.PROCESSES, tuple(group)))
    return found


def _in_loop(analysis, owner: Owner) -> bool:
    """The process is made in a loop (or comprehension) of its function, and not joined in the
    same iteration (`p.start(); p.join()` runs one process at a time)."""
    function = analysis.enclosing_function_node(owner.construction)
    loops = analysis.loops_around(owner.construction)
    if not loops or (function is not None and not any(a is function for a in analysis.ancestors(loops[0]))):
        return False
    names = _bound_to(analysis, owner.construction)
    return not any(isinstance(call.func, cst.Attribute) and call.func.attr.value == "join"
                   and isinstance(call.func.value, cst.Name) and call.func.value.value in names
                   for call in calls_in(loops[0]))


def _limited(analysis, owner: Owner) -> bool:
    """Some limit reaches the workers: in their code, at import (spawned children re-import the
    module), in the environment (inherited), or anywhere in a fork parent."""
    limits = memory_limits(analysis)
    if not limits:
        return False
    forked = analysis.start_method(owner.value)[0] == "fork"
    in_workers = set(worker_nodes(analysis, owner))
    walk = analysis.execution
    return any(limit.environment or forked or limit.anchor in in_workers or walk.runs_on_import(limit.anchor)
               for limit in limits)


def _running_together(analysis, processes: list[Owner]) -> list[Owner]:
    """The first processes made in one function that can run at the same time: the earlier one is
    not joined before the next one is made."""
    order = analysis.symbols.order_of_node
    by_function: dict = {}
    for owner in processes:
        by_function.setdefault(analysis.enclosing_function_node(owner.construction), []).append(owner)
    for owners in by_function.values():
        group = owners[:1]
        for later in owners[1:]:
            earlier = group[-1]
            names = _bound_to(analysis, earlier.construction)
            start, end = order.get(earlier.construction, 0), order.get(later.construction, 0)
            joined = any(isinstance(site.node.func, cst.Attribute) and site.node.func.attr.value == "join"
                         and isinstance(site.node.func.value, cst.Name) and site.node.func.value.value in names
                         and start < site.order < end for site in analysis.symbols.calls)
            if joined:
                break
            group.append(later)
        if len(group) >= 2:
            return group
    return []


def _bound_to(analysis, call: cst.Call) -> set[str]:
    """The names `name = Process(...)` binds."""
    parent = analysis.ancestors(call)[0]
    if isinstance(parent, cst.Assign):
        return {t.target.value for t in parent.targets if isinstance(t.target, cst.Name)}
    return set()


def worker_count(owner: Owner) -> int | None:
    """The number of workers when written as a literal; None when unknown (a CPU count, a variable)."""
    call = owner.construction
    if owner.value.detail == "keras workers":
        node = keyword(call, "workers")
    elif owner.value.kind is Kind.EXECUTOR:
        node = argument(call, 0, "max_workers")
    elif owner.value.kind is Kind.PARALLEL:
        node = argument(call, 0, "n_jobs")
    else:
        node = argument(call, 0, "processes")
    if isinstance(node, cst.Integer):
        return node.evaluated_value if node.evaluated_value > 0 else None
    return None
