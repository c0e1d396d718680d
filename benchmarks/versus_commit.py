"""tfproc-lint at an earlier commit against the working tree, on the same files, in one run.

Checks the commit out into a temporary git worktree and runs `python -m tfproc_lint.cli check`
from each tree (PYTHONPATH picks the tree; the same interpreter and libraries serve both), in
alternating order, from an empty directory, after compiling both trees to bytecode. Prints the
medians and min-max of each command's wall time and of its CPU time (user + system, workers
included), which is steadier on a loaded machine. A tree that has the result cache runs with `--no-cache`:
both sides are cold checks.

    .venv/bin/python benchmarks/versus_commit.py 3557805 --rounds 7
    .venv/bin/python benchmarks/versus_commit.py HEAD~3 --paths src/
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from lint_speed import default_roots  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("commit", help="the earlier commit (anything git rev-parse accepts)")
    parser.add_argument("--paths", nargs="+", help="files or directories (default: installed TensorFlow + Keras)")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    paths = [os.path.abspath(p) for p in args.paths] if args.paths else [str(p) for p in default_roots(False)]
    earlier = tempfile.mkdtemp(prefix="versus_")
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", earlier, args.commit], check=True)
    trees = {args.commit: earlier, "working tree": str(ROOT)}
    times: dict[tuple[str, str], list[float]] = {}
    cpu: dict[tuple[str, str], list[float]] = {}  # user + system CPU of the run: steadier under load
    cwd = tempfile.mkdtemp(prefix="versus_cwd_")  # no project configuration to pick up
    for tree in trees.values():  # bytecode for both, as an install has (see lint_speed.py)
        compileall.compile_dir(str(Path(tree) / "tfproc_lint"), quiet=1)
    cold = {name: ["--no-cache"] if "--no-cache" in (Path(tree) / "tfproc_lint" / "cli.py").read_text() else []
            for name, tree in trees.items()}
    try:
        for round_number in range(args.rounds):
            order = list(trees.items()) if round_number % 2 == 0 else list(trees.items())[::-1]
            for name, tree in order:
                for jobs in (["-j1"], []):
                    env = dict(os.environ, PYTHONPATH=tree)
                    start, used = time.perf_counter(), _children_cpu()
                    command = [sys.executable, "-m", "tfproc_lint.cli", "check", *jobs, *cold[name], *paths]
                    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
                    key = (name, " ".join(jobs) or "default jobs")
                    times.setdefault(key, []).append(time.perf_counter() - start)
                    cpu.setdefault(key, []).append(_children_cpu() - used)
                    if result.returncode not in (0, 1):
                        raise SystemExit(f"versus_commit: {name} exited {result.returncode}: {result.stderr[-500:]}")
            print(f"round {round_number + 1}/{args.rounds}", file=sys.stderr, flush=True)
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", earlier], check=False)
        shutil.rmtree(cwd, ignore_errors=True)
    print(f"{len(paths)} path(s): {' '.join(paths)}; {args.rounds} rounds, alternating order\n")
    print("| tree | command | median s | min-max s | CPU median s | CPU min-max s |\n|---|---|---:|---:|---:|---:|")
    for (name, jobs), values in times.items():
        spent = cpu[(name, jobs)]
        print(f"| {name} | `check {jobs}` | {statistics.median(values):.3f} | {min(values):.3f}-{max(values):.3f} "
              f"| {statistics.median(spent):.3f} | {min(spent):.3f}-{max(spent):.3f} |")
    return 0


def _children_cpu() -> float:
    """User and system CPU seconds of the finished child processes (their workers included)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    raise SystemExit(main())
