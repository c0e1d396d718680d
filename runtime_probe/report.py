"""The probe's outputs: report.json, report.md, benchmark.png, and the plain summary on stdout."""

from __future__ import annotations

import datetime
import importlib.metadata
import json
import os
import platform
from dataclasses import asdict
from pathlib import Path

from . import evidence, judge, lintloop
from .benchmark import BATCH, END_TO_END_TASKS, MULTIPROCESS, PATTERNS

REPRODUCE = "python -m runtime_probe --full --output probe-report"


def _tensorflow_version() -> str:
    for dist in ("tensorflow", "tensorflow-cpu"):
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return "not installed"


def build(scenarios, observed, skipped, loop, bench, gpus, wall_s, command) -> dict:
    """The whole report as plain data (what report.json holds)."""
    rows = []
    for s in scenarios:
        row = {"name": s.name, "rule": s.rule, "kind": s.kind, "path": str(s.path), "expect": s.expect,
               "expected": judge.describe_expectation(s.expect)}
        if s.name in skipped:
            row.update(observed="not run", verdict=skipped[s.name], reason="", observation=None)
        else:
            obs = observed[s.name]
            verdict, reason = judge.check(s, obs, observed)
            row.update(observed=obs.summary(), verdict=verdict, reason=reason, observation=obs.to_dict())
        rows.append(row)

    checks = [asdict(c) for c in loop.checks]
    rules, failing = _summarise(rows, checks, loop.status)
    result = _result(failing, loop.status)
    return {
        "passed": not failing,
        "result": result,
        "environment": {
            "created": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            "command": command,
            "python": platform.python_version(),
            "tensorflow": _tensorflow_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "gpus": gpus,
            "wall_s": round(wall_s, 1),
        },
        "rules": rules,
        "scenarios": rows,
        "lint": loop.to_dict(),
        "benchmark": bench,
    }


def _summarise(rows: list[dict], checks: list[dict], lint_status: str) -> tuple[dict, list[str]]:
    """Per rule: status, counts, lint and auto-fix summaries; and what fails the run."""
    rules = {}
    for code in sorted({r["rule"] for r in rows}, key=lambda c: (not lintloop.LINT_RULE.fullmatch(c), c)):
        mine = [r for r in rows if r["rule"] == code]
        names = {r["name"] for r in mine}
        own_checks = [c for c in checks if c["scenario"].removesuffix(" (auto-fixed)") in names]
        autofixed = [r for r in mine if r["kind"] == "auto-fixed" and not r["verdict"].startswith("skipped")]
        rules[code] = {
            "status": judge.rule_status(mine),
            "counts": _counts(mine),
            "lint": _lint_status(lint_status, own_checks),
            "autofix": (f"{sum(r['verdict'] == judge.CONFIRMED for r in autofixed)}/{len(autofixed)} run ok"
                        if autofixed else "none"),
            "scenarios": [r["name"] for r in mine],
        }
    failing = [f"{code} not confirmed" for code, info in rules.items() if info["status"] == judge.NOT_CONFIRMED]
    failing += [f"{r['name']}: probe error ({r['reason']})" for r in rows if r["verdict"] == judge.PROBE_ERROR]
    failing += [f"{r['name']} fails" for r in rows if r["kind"] == "auto-fixed" and r["verdict"] == judge.NOT_CONFIRMED]
    failed_checks = sum(c["passed"] is False for c in checks)
    if failed_checks:
        failing.append(f"{failed_checks} lint check(s) failed")
    return rules, failing


def _result(failing: list[str], lint_status: str) -> str:
    result = "all rules confirmed" if not failing else "FAILED: " + "; ".join(failing)
    if not lint_status.startswith("ran"):
        result += f" (lint loop not run: {lint_status})"
    return result


def merge(previous: dict, partial: dict) -> dict:
    """A run of some scenarios (`--merge`) into an earlier report: the partial run's scenario rows
    and lint checks replace the earlier ones of the same scenarios (or are added after them), the
    rules and the result are summarised again over all rows, and the header lists both runs. The
    earlier run's benchmark and environment stay; the guard column of a replaced row goes (the
    scenario may have changed since it ran under the guard) unless the partial run has one."""
    fresh = {row["name"]: row for row in partial["scenarios"]}
    rows = [fresh.pop(row["name"], row) for row in previous["scenarios"]] + list(fresh.values())
    renamed = {row["name"] for row in partial["scenarios"]}
    checks = [c for c in previous["lint"]["checks"] if c["scenario"].removesuffix(" (auto-fixed)") not in renamed]
    checks += partial["lint"]["checks"]
    lint = dict(previous["lint"], checks=checks)
    if not partial["lint"]["status"].startswith("ran"):
        lint["status"] = partial["lint"]["status"]
    rules, failing = _summarise(rows, checks, lint["status"])
    merged = dict(previous, rules=rules, scenarios=rows, lint=lint, passed=not failing,
                  result=_result(failing, lint["status"]))
    if partial.get("benchmark"):
        merged["benchmark"] = partial["benchmark"]
    env = partial["environment"]
    merged["merged_runs"] = previous.get("merged_runs", []) + [
        {"created": env["created"], "command": env["command"], "wall_s": env["wall_s"], "scenarios": len(renamed)}]
    if "guard" in previous or "guard" in partial:
        for code, info in merged["rules"].items():
            info["guard"] = judge.guard_counts([r for r in rows if r["rule"] == code])
        guarded = [r for r in rows if r.get("guard") and not r["guard"]["verdict"].startswith("skipped")]
        runs = (previous.get("guard") or {}).get("runs", []) + (partial.get("guard") or {}).get("runs", [])
        merged["guard"] = {"runs": runs, "summary": judge.guard_counts(guarded)}
    return merged


def add_guard(result: dict, scenarios, observed, skipped, command: str, wall_s: float) -> dict:
    """Put the guard pass's outcome in each scenario row it ran (`guard`), its summary per rule and
    for the run (`guard` at the top: when and how it ran)."""
    by_name = {s.name: s for s in scenarios}
    for row in result["scenarios"]:
        scenario = by_name.get(row["name"])
        if scenario is None:
            continue
        if row["name"] in skipped:
            row["guard"] = {"verdict": skipped[row["name"]], "detail": "", "codes": [], "observation": None}
            continue
        obs = observed[row["name"]]
        verdict, detail = judge.guard_check(scenario, obs)
        row["guard"] = {"verdict": verdict, "detail": detail, "codes": obs.guard_codes,
                        "observation": obs.to_dict()}
    for code, info in result["rules"].items():
        info["guard"] = judge.guard_counts([r for r in result["scenarios"] if r["rule"] == code])
    guarded = [r for r in result["scenarios"] if r.get("guard") and not r["guard"]["verdict"].startswith("skipped")]
    previous = result.get("guard") or {}
    runs = previous.get("runs") or ([{k: previous[k] for k in ("created", "command", "wall_s")}] if previous else [])
    runs.append({
        "created": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "command": command,
        "wall_s": round(wall_s, 1),
        "scenarios": len([s for s in scenarios if s.name not in skipped]),
    })
    result["guard"] = {"runs": runs, "summary": judge.guard_counts(guarded)}
    return result


def _counts(rows: list[dict]) -> str:
    """'bad 3/3, fixed 4/4 (2 skipped)': confirmed / run per kind."""
    ran = [r for r in rows if not r["verdict"].startswith("skipped")]
    parts = [
        f"{kind} {sum(r['verdict'] == judge.CONFIRMED for r in of_kind)}/{len(of_kind)}"
        for kind in ("bad", "fixed")
        if (of_kind := [r for r in ran if r["kind"] == kind])
    ]
    skipped = sum(r["kind"] != "auto-fixed" for r in rows) - sum(r["kind"] != "auto-fixed" for r in ran)
    if skipped:
        parts.append(f"{skipped} skipped")
    return ", ".join(parts)


def _lint_status(lint_status: str, checks: list[dict]) -> str:
    if not lint_status.startswith("ran"):
        return "linter unavailable"
    judged = [c for c in checks if c["passed"] is not None]
    if not judged:
        return "no checks"
    return f"{sum(c['passed'] for c in judged)}/{len(judged)} checks passed"


def _cut(text: str, width: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)]
    lines = [header, ["-" * w for w in widths], *rows]
    return "\n".join("  ".join(str(c).ljust(w) for c, w in zip(line, widths)).rstrip() for line in lines)


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    lines = [header, ["---"] * len(header), *rows]
    return "\n".join("| " + " | ".join(str(c).replace("|", "\\|") for c in line) + " |" for line in lines)


RULE_HEADER = ["rule", "runtime", "scenarios", "lint", "auto-fix"]
SCENARIO_HEADER = ["scenario", "kind", "expected", "observed", "verdict"]


def _rule_rows(report: dict) -> list[list[str]]:
    guard = "guard" in report
    return [
        [code, info["status"], info["counts"], info["lint"], info["autofix"]]
        + ([info.get("guard", "-")] if guard else [])
        for code, info in report["rules"].items()
    ]


def _guard_cell(row: dict, width: int) -> str:
    guard = row.get("guard")
    if not guard:
        return "not run"
    return _cut(f"{guard['verdict']} ({guard['detail']})" if guard["detail"] else guard["verdict"], width)


def _scenario_rows(report: dict, width: int) -> list[list[str]]:
    guard = "guard" in report
    return [
        [s["name"], s["kind"], _cut(s["expected"], width), _cut(s["observed"], width), s["verdict"]]
        + ([_guard_cell(s, width)] if guard else [])
        for s in report["scenarios"]
    ]


def _headers(report: dict) -> tuple[list[str], list[str]]:
    extra = ["guard"] if "guard" in report else []
    return RULE_HEADER + extra, SCENARIO_HEADER + extra


def _fmt(stats: dict | None, digits: int = 0) -> str:
    if not stats:
        return "-"
    median = f"{stats['median']:,.{digits}f}"
    if stats["n"] < 2:
        return median
    return f"{median} ({stats['min']:,.{digits}f}–{stats['max']:,.{digits}f})"


def benchmark_rows(workload_summary: dict) -> list[list[str]]:
    rows = []
    for pattern, row in workload_summary["patterns"].items():
        failed = f" ({len(row['failed'])} failed)" if row["failed"] else ""
        rows.append([
            PATTERNS[pattern] + failed,
            _fmt(row["tasks_per_s"]),
            _fmt(row["startup_s"], 2),
            _fmt(row["parent_rss_mib"]),
            _fmt(row["worker_rss_mib"]),
            f"{row['end_to_end_s']:.1f}" if "end_to_end_s" in row else "-",
        ])
    return rows


BENCH_HEADER = ["pattern", "tasks/s", "start-up s", "parent RSS MiB", "worker RSS MiB",
                f"{END_TO_END_TASKS} tasks s (est.)"]


# The comparisons README's prose makes: one state per worker against one per task, batching against not.
RATIOS = (("init-spawn", "per-task"), ("chunked", "init-spawn"), ("batched", "sequential"))


def verdicts(bench: dict) -> list[str]:
    """One plain sentence per workload: which pattern wins here."""
    lines = []
    for workload, summary in bench["summary"].items():
        best, best_mp = summary["fastest"], summary["fastest_multiprocess"]
        if best is None:
            continue
        rate = {p: row["tasks_per_s"]["median"] for p, row in summary["patterns"].items() if row["tasks_per_s"]}
        text = f"{workload}: fastest is {PATTERNS[best]} ({rate[best]:,.0f} tasks/s)"
        if best_mp and best not in MULTIPROCESS:
            text += f", {rate[best] / rate[best_mp]:.1f}x the best multi-process pattern ({PATTERNS[best_mp]})"
        text += f"; fastest for {END_TO_END_TASKS} tasks including start-up: {PATTERNS[summary['fastest_end_to_end']]}"
        text += "".join(f"; {PATTERNS[fast]} is {rate[fast] / rate[slow]:.0f}x {PATTERNS[slow]}"
                        for fast, slow in RATIOS if rate.get(fast) and rate.get(slow))
        lines.append(text + ".")
    return lines


def summary_text(report: dict) -> str:
    rule_header, scenario_header = _headers(report)
    parts = [
        "Rules",
        _table(rule_header, _rule_rows(report)),
        "",
        "Scenarios",
        _table(scenario_header, _scenario_rows(report, 60)),
        "",
        f"Lint loop: {report['lint']['status']}",
    ]
    parts += [f"  {c['scenario']}: {c['requirement']} FAILED ({c['detail']})"
              for c in report["lint"]["checks"] if c["passed"] is False]
    bench = report.get("benchmark")
    if bench and "summary" in bench:
        for workload, summary in bench["summary"].items():
            parts += ["", f"Benchmark ({bench['mode']}): {workload}", _table(BENCH_HEADER, benchmark_rows(summary))]
        parts += ["", *verdicts(bench)]
    elif bench:
        parts += ["", f"Benchmark failed: {bench['error']}"]
    if "guard" in report:
        parts += ["", f"Guard: {report['guard']['summary']} (wall {report['guard']['runs'][-1]['wall_s']:.0f} s)"]
    parts += ["", f"Result: {report['result']} (wall {report['environment']['wall_s']:.0f} s)"]
    return "\n".join(parts)


def markdown(report: dict) -> str:
    env = report["environment"]
    rule_header, scenario_header = _headers(report)
    parts = [
        "# tfproc-lint runtime probe",
        "",
        (f"{report['result']}. Python {env['python']}, TensorFlow {env['tensorflow']}, {env['cpus']} CPUs, "
         f"GPUs: {env['gpus']}; {env['created']}; wall {env['wall_s']:.0f} s. Command: `{env['command']}`"),
        "",
        *_merged_note(report),
        "## Rules",
        "",
        _md_table(rule_header, _rule_rows(report)),
        "",
        *_guard_note(report),
        "## Scenarios: expected vs observed",
        "",
        _md_table(scenario_header, _scenario_rows(report, 160)),
        "",
        f"## Lint loop: {report['lint']['status']}",
        "",
    ]
    checks = report["lint"]["checks"]
    if checks:
        status = {True: "passed", False: "FAILED", None: "n/a"}
        parts.append(_md_table(
            ["scenario", "requirement", "result", "detail"],
            [[c["scenario"], c["requirement"], status[c["passed"]], _cut(c["detail"], 160)] for c in checks],
        ))
    bench = report.get("benchmark")
    if bench:
        parts += ["", f"## Benchmark ({bench['mode']})", ""]
        if "error" in bench:
            parts.append(f"Failed: {bench['error']}")
        else:
            settings = bench["settings"]
            parts += [
                (f"Medians of {settings['repeats']} run(s), (min–max) when repeated; one task = inference on one "
                 f"row of 64 floats (the pool of {BATCH}-row tasks is counted in rows); 2 workers; each run in its "
                 f"own process; steady state measured for at least {settings['min_time']} s after a warm-up round. "
                 "Start-up = until every worker has its state "
                 f"(spawned workers include their TensorFlow import). {END_TO_END_TASKS}-task time is estimated as "
                 "start-up + tasks / throughput. Keras calls use `predict_on_batch`."),
                "",
                "![benchmark](benchmark.png)",
            ]
            for workload, summary in bench["summary"].items():
                parts += ["", f"### {workload}: {bench['workloads'][workload]}", "",
                          _md_table(BENCH_HEADER, benchmark_rows(summary))]
            parts += ["", *[f"- {line}" for line in verdicts(bench)], "", f"Reproduce: `{REPRODUCE}`"]
    return "\n".join(parts) + "\n"


def _merged_note(report: dict) -> list[str]:
    runs = report.get("merged_runs")
    if not runs:
        return []
    return [
        "Scenarios run again since, their rows replacing that run's (`--merge`): " + "; ".join(
            f"{run['created']}, {run['scenarios']} scenarios, wall {run['wall_s']:.0f} s: `{run['command']}`"
            for run in runs) + ".",
        "",
    ]


def _guard_note(report: dict) -> list[str]:
    guard = report.get("guard")
    if not guard:
        return []
    return [
        (f"Guard column: every scenario run again under the runtime guard (`python -m tfproc_lint.guard "
         f"SCENARIO`; notebooks with `%load_ext tfproc_lint.guard` first): {guard['summary']}. A bad scenario "
         "is *caught* when the guard reported its rule and the run ended by itself (a slow but working one, "
         "expected ok: when the guard warned and the run still ended ok with its result); a fixed one is "
         "*clean* when it ran ok and the guard reported nothing. Runs (a later run's rows replace an earlier "
         "one's): " + "; ".join(
             f"{run['created']}, {run.get('scenarios', '?')} scenarios, wall {run['wall_s']:.0f} s: `{run['command']}`"
             for run in guard["runs"])),
        "",
    ]


def chart(bench: dict, path: Path) -> None:
    """Throughput, start-up and worker memory per pattern and workload, medians with min–max."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    workloads = list(bench["summary"])
    metrics = [("tasks_per_s", "tasks/s (log)"), ("startup_s", "start-up (s)"), ("worker_rss_mib", "worker RSS (MiB)")]
    fig, axes = plt.subplots(len(workloads), len(metrics), figsize=(15, 3.2 * len(workloads) + 0.6), squeeze=False)
    labels = [PATTERNS[p] for p in PATTERNS]
    for row, workload in enumerate(workloads):
        patterns = bench["summary"][workload]["patterns"]
        for col, (key, title) in enumerate(metrics):
            ax = axes[row][col]
            stats = [patterns[p][key] for p in PATTERNS]
            medians = [s["median"] if s else 0 for s in stats]
            low = [s["median"] - s["min"] if s else 0 for s in stats]
            high = [s["max"] - s["median"] if s else 0 for s in stats]
            ax.barh(range(len(labels)), medians, xerr=[low, high], color="#4c72b0", ecolor="#333333")
            ax.set_yticks(range(len(labels)))
            ax.set_yticklabels(labels if col == 0 else [], fontsize=8)
            ax.invert_yaxis()
            if key == "tasks_per_s":
                ax.set_xscale("log")
            ax.set_title(f"{workload}: {title}", fontsize=9)
            ax.tick_params(axis="x", labelsize=8)
    fig.suptitle(f"runtime probe benchmark ({bench['mode']}, medians, bars = min–max)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write(report: dict, outdir: Path, with_chart: bool = True) -> list[Path]:
    outdir.mkdir(parents=True, exist_ok=True)
    written = [outdir / "report.json", outdir / "report.md", outdir / evidence.EVIDENCE_FILE]
    written[0].write_text(json.dumps(report, indent=2, default=str) + "\n", encoding="utf-8")
    written[1].write_text(markdown(report), encoding="utf-8")
    evidence.write_for_docs(report, written[2])  # what the rule pages quote (tfproc_lint/docs.py)
    bench = report.get("benchmark")
    if bench and "summary" in bench and with_chart:
        chart(bench, outdir / "benchmark.png")
        written.append(outdir / "benchmark.png")
    return written
