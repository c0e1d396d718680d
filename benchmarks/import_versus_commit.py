"""The CPU time a process spends importing the engine and every rule: an earlier commit against the
working tree, in one run.

Each worker process of `tfproc-lint check` pays this import once (a run on few files pays it in the
only process). The commit is checked out into a temporary git worktree; both trees are compiled to
bytecode first (an install has it; a shell with PYTHONDONTWRITEBYTECODE would otherwise time the
compiler), then fresh interpreters import from each tree in alternating order.

    .venv/bin/python benchmarks/import_versus_commit.py c46fa6b --rounds 9
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IMPORT = """
import time
started = time.process_time()
import tfproc_lint.engine
import tfproc_lint.fixing
from tfproc_lint.rules.base import all_rules
all_rules()
print(time.process_time() - started)
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("commit", help="the earlier commit (anything git rev-parse accepts)")
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    earlier = tempfile.mkdtemp(prefix="import_versus_")
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", earlier, args.commit], check=True)
    trees = {args.commit: earlier, "working tree": str(ROOT)}
    try:
        for tree in trees.values():
            compileall.compile_dir(str(Path(tree) / "tfproc_lint"), quiet=1)
        seconds: dict[str, list[float]] = {name: [] for name in trees}
        for round_number in range(args.rounds):
            order = list(trees.items()) if round_number % 2 == 0 else list(trees.items())[::-1]
            for name, tree in order:
                done = subprocess.run([sys.executable, "-c", IMPORT], env={**os.environ, "PYTHONPATH": tree},
                                      cwd=tempfile.gettempdir(), capture_output=True, text=True, check=True)
                seconds[name].append(float(done.stdout.split()[-1]))
        print(f"engine + rules import, CPU seconds, {args.rounds} rounds, alternating order\n")
        print("| tree | median | min-max |\n|---|---:|---:|")
        for name, measured in seconds.items():
            print(f"| {name} | {statistics.median(measured):.3f} | {min(measured):.3f}-{max(measured):.3f} |")
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", earlier], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
