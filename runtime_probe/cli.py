"""`python -m runtime_probe` / `tfproc-lint probe`: run the scenarios, the lint loop and the
benchmark; print the summary; write report.json, report.md and benchmark.png.

Exit code: 0 when every rule that ran is confirmed and the lint loop found no failure, 1 otherwise,
2 on usage errors.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import threading
import time
from pathlib import Path

from . import benchmark, catalog, gpu, judge, lintloop, report, runner


def build_parser(prog: str = "python -m runtime_probe") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Run the real TensorFlow scenario behind each tfproc-lint rule and report "
        "whether it behaves as the rule says; optionally benchmark the fixes.",
    )
    parser.add_argument("--rules", help="comma-separated rule codes or prefixes, e.g. TFP402 or TFP4 (default: all)")
    parser.add_argument("--scenarios", nargs="+", metavar="NAME", help="scenario names (default: all)")
    parser.add_argument("--benchmark", action=argparse.BooleanOptionalAction, default=None,
                        help="run the benchmark of the fixes (default: only with --quick or --full)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", dest="mode", action="store_const", const="quick",
                      help="a bad scenario and its twin per rule (unless --rules or --scenarios name "
                      "others) and the quick benchmark: one workload, one run per pattern (for tests)")
    mode.add_argument("--full", dest="mode", action="store_const", const="full",
                      help="every scenario and the full benchmark: all workloads, 5 runs per pattern "
                      "(README figures)")
    guard = parser.add_mutually_exclusive_group()
    guard.add_argument("--guard", action="store_true",
                       help="also run every chosen scenario under tfproc-lint's runtime guard (the report's "
                       "guard column)")
    guard.add_argument("--guard-only", action="store_true",
                       help="only the guard pass: run the chosen scenarios under the runtime guard and merge "
                       "the guard column into OUTPUT/report.json and report.md (made if missing)")
    parser.add_argument("--merge", action="store_true",
                        help="merge this run's scenario rows into OUTPUT/report.json and report.md instead of "
                        "replacing them (a run of some scenarios; the earlier benchmark stays)")
    parser.add_argument("--timeout", type=float, help="time limit per scenario in seconds, stretched on a busy "
                        "machine by the measured load (default: each scenario's own)")
    parser.add_argument("--idle", type=float, default=runner.IDLE_S,
                        help="call a scenario hung once its processes used no CPU for this many seconds "
                        "(0: wait for the time limit; default %(default)s)")
    parser.add_argument("--output", type=Path, default=Path("probe-report"), help="output folder (default %(default)s)")
    parser.add_argument("--jobs", type=int, default=2, help="scenarios run at the same time (default %(default)s)")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True,
                        help="one line on stderr per finished scenario and benchmark run, with or without a "
                        "terminal, as pytest prints its progress (default: on; --no-progress prints only the "
                        "summary)")
    return parser


class Progress:
    """Progress lines on stderr, terminal or not: a run takes minutes (about 10 for --quick on 2
    cores), and a log or CI job that shows nothing for that long looks hung. `--no-progress`
    turns them off."""

    def __init__(self, total: int, enabled: bool = True):
        self.enabled = enabled
        self.total, self.done = total, 0
        self.lock = threading.Lock()  # scenarios finish in the runner's threads

    def scenario(self, scenario: catalog.Scenario, obs: runner.Observation) -> None:
        with self.lock:
            self.done += 1
            self.line(f"[{self.done}/{self.total}] {scenario.name}: {obs.summary()} ({obs.duration_s:.0f} s)")

    def line(self, text: str) -> None:
        if self.enabled:
            print(text, file=sys.stderr, flush=True)


def _usage_error(parser: argparse.ArgumentParser, message: str) -> int:
    parser.print_usage(sys.stderr)
    print(f"{parser.prog}: error: {message}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None, prog: str = "python -m runtime_probe") -> int:
    parser = build_parser(prog)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
        return int(exc.code or 0)
    all_scenarios = catalog.discover()
    rules = [r.strip() for r in args.rules.split(",") if r.strip()] if args.rules else None
    unknown = sorted(r for r in rules or () if not any(s.rule.startswith(r) for s in all_scenarios))
    unknown += sorted(set(args.scenarios or ()) - {s.name for s in all_scenarios})
    if unknown:
        return _usage_error(parser, f"unknown rule or scenario: {', '.join(unknown)}")
    if args.jobs < 1 or (args.timeout is not None and args.timeout <= 0) or args.idle < 0:
        return _usage_error(parser, "--jobs and --timeout must be positive, --idle not negative")
    mode = args.mode or "quick"
    run_benchmark = args.benchmark if args.benchmark is not None else args.mode is not None
    if args.guard_only:
        run_benchmark = False

    started = time.monotonic()
    if args.mode == "quick" and not rules and not args.scenarios:
        chosen = catalog.quick_set(all_scenarios)
    else:
        chosen = catalog.select(all_scenarios, rules=rules, names=args.scenarios)
    outdir = args.output.absolute()  # each scenario runs in a directory of its own
    outdir.mkdir(parents=True, exist_ok=True)
    gpus = gpu.gpu_count() if any(s.gpus for s in chosen) else 0
    command = " ".join([prog, *(sys.argv[1:] if argv is None else argv)])
    if args.guard_only:
        return _guard_only(chosen, outdir, args, gpus, command, started)
    if not args.merge:
        shutil.rmtree(outdir / "autofixed", ignore_errors=True)
        (outdir / "benchmark.png").unlink(missing_ok=True)
    loop = lintloop.run(chosen, outdir)
    scenarios = chosen + loop.autofixed
    cpus = os.cpu_count() or 1
    reasons = {s.name: gpu.skip_reason(s.gpus, gpus) or catalog.cpu_skip_reason(s.max_cpus, cpus)
               or catalog.requirement_skip_reason(s.requires) for s in scenarios}
    skipped = {name: reason for name, reason in reasons.items() if reason}
    to_run = [s for s in scenarios if s.name not in skipped]
    progress = Progress(len(to_run), enabled=args.progress)
    observed = runner.run_all(to_run, jobs=args.jobs, progress=progress.scenario,
                              timeout=args.timeout, idle_s=args.idle or None)
    bench = benchmark.run(mode, progress=progress.line) if run_benchmark else None

    result = report.build(scenarios, observed, skipped, loop, bench, gpus, time.monotonic() - started, command)
    if args.merge and (outdir / "report.json").is_file():
        previous = json.loads((outdir / "report.json").read_text(encoding="utf-8"))
    else:
        previous = None
    if args.guard:
        guard_started = time.monotonic()
        guarded = [s for s in chosen if s.name not in skipped]
        progress = Progress(len(guarded), enabled=args.progress)
        observed = runner.run_all(guarded, jobs=args.jobs, progress=progress.scenario, timeout=args.timeout,
                                  idle_s=args.idle or None, guard=True)
        report.add_guard(result, chosen, observed, skipped, command, time.monotonic() - guard_started)
    passed = result["passed"]  # this run's scenarios; a merged report may fail for older rows
    if previous is not None:
        result = report.merge(previous, result)
    report.write(result, outdir, with_chart=previous is None or bench is not None)
    print(report.summary_text(result))
    return 0 if passed else 1


def _guard_only(chosen, outdir: Path, args, gpus: int, command: str, started: float) -> int:
    """Run the chosen scenarios under the guard; merge the guard column into the report in `outdir`.
    Exit 0 when every bad scenario it ran was caught and every fixed one ran clean."""
    cpus = os.cpu_count() or 1
    reasons = {s.name: gpu.skip_reason(s.gpus, gpus) or catalog.cpu_skip_reason(s.max_cpus, cpus) for s in chosen}
    skipped = {name: reason for name, reason in reasons.items() if reason}
    to_run = [s for s in chosen if s.name not in skipped]
    progress = Progress(len(to_run), enabled=args.progress)
    observed = runner.run_all(to_run, jobs=args.jobs, progress=progress.scenario, timeout=args.timeout,
                              idle_s=args.idle or None, guard=True)
    path = outdir / "report.json"
    if path.is_file():
        result = json.loads(path.read_text(encoding="utf-8"))
    else:  # a report of the guard pass alone: the unguarded columns say "not run"
        empty = lintloop.LintLoop(status="not run (guard pass only)")
        not_run = {s.name: "not run (guard pass only)" for s in chosen}
        result = report.build(chosen, {}, not_run, empty, None, gpus, 0.0, command)
    known = {row["name"] for row in result["scenarios"]}
    missing = [s for s in chosen if s.name not in known]
    if missing:  # scenarios newer than the report: rows without the unguarded run
        extra = report.build(missing, {}, {s.name: "not run (guard pass only)" for s in missing},
                             lintloop.LintLoop(status="not run"), None, gpus, 0.0, command)
        result["scenarios"] += extra["scenarios"]
    report.add_guard(result, chosen, observed, skipped, command, time.monotonic() - started)
    report.write(result, outdir, with_chart=False)  # the benchmark did not run again
    print(report.summary_text(result))
    verdicts = [judge.guard_check(s, observed[s.name])[0] for s in to_run]
    return 0 if all(v in judge.GUARD_GOOD for v in verdicts) else 1
