"""Time as a run's own processes had the machine: wall time, less the share they spent queued for a CPU.

A scenario's time limit is set on a quiet machine. On a busy one (2 cores, a load of 8) the same work
takes several times as long, and a fixed number of wall seconds calls a slow scenario hung. The kernel
counts, per thread, the time spent on a CPU and the time spent runnable but queued for one
(/proc/PID/task/TID/schedstat). Over each interval, wall time counts in the proportion
run / (run + queued) of the run's threads: 1 on a quiet machine, about 1/5 when each thread gets a fifth
of a core; an interval in which none of them ran or waited (all asleep: an idle hang, a sleep) counts in
full. Where schedstat cannot be read (not Linux), every interval counts in full: wall time.
"""

from __future__ import annotations

import os
import time


def step(wall_s: float, run_ns: int, queued_ns: int) -> float:
    """The part of `wall_s` that counts, given the CPU time the threads got and the time they were queued."""
    wanted = run_ns + queued_ns
    return wall_s * run_ns / wanted if wanted > 0 else wall_s


def schedstats(pid: int):
    """(tid, ns on a CPU, ns queued for one) for each thread of `pid` that can be read."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat", "rb") as file:
                run, queued = file.read().split()[:2]
            yield int(tid), int(run), int(queued)
        except (OSError, ValueError):
            continue


class RunClock:
    """Counted time since the start of a run; `advance(pids)` reads its threads' scheduler statistics."""

    def __init__(self, now: float | None = None):
        self.started = self.last = time.monotonic() if now is None else now
        self.counted = 0.0
        self._threads: dict[tuple[int, int], tuple[int, int]] = {}  # (pid, tid) -> (run, queued) last read

    def advance(self, pids, now: float | None = None) -> float:
        now = time.monotonic() if now is None else now
        run = queued = 0
        for pid in pids:
            for tid, ran, waited in schedstats(pid):
                before_run, before_queued = self._threads.get((pid, tid), (0, 0))
                if ran < before_run:  # a reused id: a new thread
                    before_run = before_queued = 0
                run += ran - before_run
                queued += waited - before_queued
                self._threads[(pid, tid)] = (ran, waited)
        self.counted += step(now - self.last, run, queued)
        self.last = now
        return self.counted

    def stretch(self) -> float:
        """Wall time over counted time so far: how much the machine's load slowed the run (1.0: not at all)."""
        wall = self.last - self.started
        return wall / self.counted if self.counted > 0 else 1.0
