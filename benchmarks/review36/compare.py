"""Re-run the linter over the issue-36 review corpus and compare it with the corpus's ground truth.

The corpus is public projects exported outside git (default /work/corpus36, one folder per project,
each with an empty `.git` so that the project root is found as in a clone; corpus.tsv says which
repository and commit each folder holds). Every project is checked whole from its own folder with
the project layer on, once with the default rules and once with `--extend-select TFP3`; the two
runs' findings are merged. ground_truth.json holds the judged findings, the problems read in the
code (with the codes and lines where a finding would count as found) and the near misses that must
stay silent. The script prints, per class of issue 36, the problems found and missed, and the
precision over every finding:

- a finding judged in ground_truth.json keeps its verdict; one at a problem's line with one of its
  codes is true; one at a near miss's line is false; any other is unjudged (judge it and add it);
- exit status 0: no false and no unjudged finding; 1: some; 2: a run failed.

    python benchmarks/review36/compare.py                        # run the linter (about a minute)
    python benchmarks/review36/compare.py --reuse /work/review36  # use saved P.json / P.tfp3.json
    python benchmarks/review36/compare.py --save /tmp/out --json /tmp/compare.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
RUNS = {"": [], ".tfp3": ["--extend-select", "TFP3"]}


@dataclass(frozen=True)
class Finding:
    """One reported finding, keyed as the ground truth keys it."""

    project: str
    path: str
    line: int
    code: str


@dataclass(frozen=True)
class Problem:
    """A problem read in the code: where a finding would count as found, and its classes."""

    id: str
    project: str
    path: str
    lines: tuple[int, ...]
    codes: tuple[str, ...]
    classes: tuple[int, ...]
    primary_class: int
    elsewhere: tuple[tuple[str, tuple[int, ...]], ...] = ()

    def matches(self, finding: Finding) -> bool:
        """A finding with one of the codes at the problem's lines, or at one of its other accepted places."""
        places = ((self.path, self.lines), *self.elsewhere)
        return finding.project == self.project and finding.code in self.codes \
            and any(finding.path == path and finding.line in lines for path, lines in places)


def _lint(project_dir: Path, extra: list[str]) -> tuple[dict, float]:
    """The linter's JSON report for one project, run from its folder, and the wall time."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    command = [sys.executable, "-m", "tfproc_lint.cli", "check", ".", "--no-cache", "--format", "json", *extra]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=project_dir, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise RuntimeError(f"{project_dir.name}: exit {done.returncode}: {done.stderr[-2000:]}")
    return json.loads(done.stdout), elapsed


def _reports(project: str, corpus: Path, reuse: Path | None, save: Path | None) -> tuple[list[dict], float | None]:
    """The reports of both runs for one project, from saved files or fresh runs."""
    reports, seconds = [], None
    for suffix, extra in RUNS.items():
        if reuse is not None:
            reports.append(json.loads((reuse / f"{project}{suffix}.json").read_text()))
            continue
        report, elapsed = _lint(corpus / project, extra)
        seconds = elapsed if suffix == "" else seconds
        reports.append(report)
        if save is not None:
            save.mkdir(parents=True, exist_ok=True)
            (save / f"{project}{suffix}.json").write_text(json.dumps(report, indent=1))
    return reports, seconds


def _findings(project: str, reports: list[dict]) -> tuple[set[Finding], int]:
    """The merged findings of a project's reports, and how many files reported errors."""
    found, errors = set(), 0
    for report in reports:
        errors = max(errors, len(report.get("errors", [])))
        for item in report["findings"]:
            found.add(Finding(project, item["path"].removeprefix("./"), item["line"], item["code"]))
    return found, errors


def _verdict(finding: Finding, judged: dict, problems: list[Problem], near: set) -> str:
    if (finding.project, finding.path, finding.line, finding.code) in judged:
        return judged[finding.project, finding.path, finding.line, finding.code]
    if any(problem.matches(finding) for problem in problems):
        return "true"
    if (finding.project, finding.path, finding.line) in near:
        return "false"
    return "unjudged"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=Path("/work/corpus36"))
    parser.add_argument("--reuse", type=Path, help="folder of saved reports (P.json, P.tfp3.json) instead of runs")
    parser.add_argument("--save", type=Path, help="folder to save the fresh reports in")
    parser.add_argument("--json", type=Path, help="write the comparison here")
    args = parser.parse_args(argv)

    truth = json.loads((HERE / "ground_truth.json").read_text())
    judged = {(f["project"], f["path"], f["line"], f["code"]): f["verdict"] for f in truth["findings"]}
    problems = [Problem(p["id"], p["project"], p["path"], tuple(p["lines"]), tuple(p["codes"]), tuple(p["classes"]),
                        p["primary_class"], tuple((e["path"], tuple(e["lines"])) for e in p.get("elsewhere", [])))
                for p in truth["problems"]]
    near = {(n["project"], n["path"], n["line"]) for n in truth["near_misses"]}

    rows, verdicts, every = [], Counter(), []
    for project in (p["dir"] for p in truth["projects"]):
        try:
            reports, seconds = _reports(project, args.corpus, args.reuse, args.save)
        except (OSError, RuntimeError, json.JSONDecodeError) as failure:
            print(f"run failed: {failure}", file=sys.stderr)
            return 2
        found, errors = _findings(project, reports)
        for finding in sorted(found, key=lambda f: (f.path, f.line, f.code)):
            verdict = _verdict(finding, judged, problems, near)
            verdicts[verdict] += 1
            every.append({**finding.__dict__, "verdict": verdict})
        rows.append({"project": project, "findings": len(found), "errors": errors, "seconds": seconds})
        print(f"{project:50} findings {len(found):3}  files with errors {errors}"
              + (f"  {seconds:6.1f} s" if seconds is not None else ""))

    reported = {(f["project"], f["path"], f["line"], f["code"]) for f in every}
    status = {p.id: any(p.matches(Finding(*key)) for key in reported) for p in problems}
    by_class = {}
    for number, name in sorted(truth["classes"].items(), key=lambda item: int(item[0])):
        members = [p for p in problems if int(number) in p.classes or (int(number) == 0 and p.primary_class == 0)]
        by_class[number] = {"name": name, "found": sum(status[p.id] for p in members), "problems": len(members),
                            "missed": [p.id for p in members if not status[p.id]]}
        print(f"class {number} ({name}): found {by_class[number]['found']} of {len(members)}"
              + (f"; missed {', '.join(by_class[number]['missed'])}" if by_class[number]["missed"] else ""))
    judged_count = verdicts["true"] + verdicts["false"]
    precision = verdicts["true"] / judged_count if judged_count else None
    print(f"problems found {sum(status.values())} of {len(problems)}; findings {len(every)}: true {verdicts['true']}, "
          f"false {verdicts['false']}, unjudged {verdicts['unjudged']}; precision "
          + (f"{precision:.2f}" if precision is not None else "n/a"))
    for finding in every:
        if finding["verdict"] != "true":
            print(f"  {finding['verdict']}: {finding['project']} {finding['path']}:{finding['line']} {finding['code']}")
    if args.json is not None:
        args.json.write_text(json.dumps({"projects": rows, "findings": every, "problems": status, "classes": by_class,
                                         "precision": precision}, indent=1))
    return 1 if verdicts["false"] or verdicts["unjudged"] else 0


if __name__ == "__main__":
    sys.exit(main())
