"""The findings and fixes of an earlier commit against the working tree's, on the repository's own code.

A renovation promises no change in behaviour: this script checks that promise. It checks the commit
out into a temporary git worktree and runs `python -m tfproc_lint.cli` from each tree (PYTHONPATH
picks the tree; the same interpreter serves both) on every fixture, example and probe scenario:

- `check --format json --no-cache`, with the default selection and with every rule (`--select TFP`);
  each fixture project from inside its own folder, so its configuration and entry points count;
- `check --diff --unsafe-fixes --select TFP` on the fix fixtures, the lint fixtures and the examples:
  the fixes themselves.

Findings are compared by (path, line, column, code); a finding whose message changed is listed as a
wording change. Exit status: 0 same findings and fixes, 1 a finding or a fix differs, 2 a run failed.

    .venv/bin/python benchmarks/findings_versus_commit.py 912a59c
    .venv/bin/python benchmarks/findings_versus_commit.py 912a59c --json /tmp/same.json
    .venv/bin/python benchmarks/findings_versus_commit.py 912a59c --only fixes   # the fix runs only
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_SELECTIONS = {"default": [], "all": ["--select", "TFP"]}


@dataclass(frozen=True)
class Run:
    """One linter run: the folder it runs from, what it checks, and its options."""

    name: str
    cwd: str  # relative to the tree's root
    paths: tuple[str, ...]
    options: tuple[str, ...]
    diff: bool = False


def runs() -> list[Run]:
    plain = ["fixtures/lint", "examples", "runtime_probe/scenarios", "fixtures/fix"]
    found: list[Run] = []
    for selection, options in _SELECTIONS.items():
        for path in plain:
            found.append(Run(f"{path} [{selection}]", ".", (path,), tuple(options)))
        for project in sorted(p.name for p in (ROOT / "fixtures" / "projects").iterdir() if p.is_dir()):
            found.append(Run(f"fixtures/projects/{project} [{selection}]", f"fixtures/projects/{project}", (".",),
                             tuple(options)))
    for path in ["fixtures/fix", "fixtures/lint", "examples"]:
        found.append(Run(f"{path} [fixes]", ".", (path,), ("--select", "TFP", "--unsafe-fixes"), diff=True))
    return found


def _lint(tree: str, run: Run) -> tuple[int, str, str]:
    if not os.path.isdir(os.path.join(tree, run.cwd)):  # a fixture project new in the later tree: no findings
        return 0, "" if run.diff else json.dumps({"findings": []}), ""
    env = {**os.environ, "PYTHONPATH": tree, "PYTHONHASHSEED": "0"}
    if not os.path.isdir(os.path.join(tree, run.cwd)):  # a fixture project added since: nothing found there before
        return 0, json.dumps({"findings": []}), ""
    mode = ["--diff"] if run.diff else ["--format", "json"]
    command = [sys.executable, "-m", "tfproc_lint.cli", "check", *run.paths, "--no-cache", "-j", "1", *mode,
               *run.options]
    done = subprocess.run(command, cwd=os.path.join(tree, run.cwd), env=env, capture_output=True, text=True,
                          timeout=900)
    return done.returncode, done.stdout, done.stderr


def _findings(output: str) -> dict[tuple, str]:
    found = {}
    for finding in json.loads(output)["findings"]:
        key = (finding["path"], finding.get("cell"), finding["line"], finding["column"], finding["code"])
        found[key] = finding["message"]
    return found


def _relative(text: str, tree: str) -> str:
    return text.replace(tree.rstrip("/") + "/", "")


def compare(earlier: str, later: str, only: str = "") -> dict:
    report: dict = {"runs": [], "findings_differ": 0, "wording_changed": 0, "fixes_differ": 0, "failed": 0}
    for run in runs():
        if only not in run.name:
            continue
        outcome: dict = {"run": run.name}
        results = {side: _lint(tree, run) for side, tree in (("before", earlier), ("after", later))}
        codes = {side: result[0] for side, result in results.items()}
        outcome["exit"] = codes
        if any(code not in (0, 1) for code in codes.values()):
            outcome["error"] = {side: results[side][2][-2000:] for side in results}
            report["failed"] += 1
        elif run.diff:
            before = _relative(results["before"][1], earlier)
            after = _relative(results["after"][1], later)
            outcome["same_fixes"] = before == after
            if before != after:
                report["fixes_differ"] += 1
                outcome["diff_lines"] = sorted(set(before.splitlines()) ^ set(after.splitlines()))[:40]
        else:
            before = {(_relative(k[0], earlier), *k[1:]): _relative(v, earlier)
                      for k, v in _findings(results["before"][1]).items()}
            after = {(_relative(k[0], later), *k[1:]): _relative(v, later)
                     for k, v in _findings(results["after"][1]).items()}
            outcome["count"] = {"before": len(before), "after": len(after)}
            outcome["only_before"] = [list(k) + [before[k]] for k in sorted(set(before) - set(after), key=str)]
            outcome["only_after"] = [list(k) + [after[k]] for k in sorted(set(after) - set(before), key=str)]
            outcome["reworded"] = [[list(k), before[k], after[k]] for k in sorted(set(before) & set(after), key=str)
                                   if before[k] != after[k]]
            report["findings_differ"] += bool(outcome["only_before"] or outcome["only_after"])
            report["wording_changed"] += len(outcome["reworded"])
            if codes["before"] != codes["after"]:
                report["findings_differ"] += 1
        report["runs"].append(outcome)
        print(_line(outcome), flush=True)
    return report


def _line(outcome: dict) -> str:
    if "error" in outcome:
        return f"FAILED  {outcome['run']}: exit {outcome['exit']}"
    if "same_fixes" in outcome:
        return f"{'same' if outcome['same_fixes'] else 'DIFFER'}    {outcome['run']}"
    differ = outcome["only_before"] or outcome["only_after"] or outcome["exit"]["before"] != outcome["exit"]["after"]
    words = f", {len(outcome['reworded'])} reworded" if outcome["reworded"] else ""
    return (f"{'DIFFER' if differ else 'same'}    {outcome['run']}: {outcome['count']['before']} -> "
            f"{outcome['count']['after']} findings{words}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("commit", help="the earlier commit (anything git rev-parse accepts)")
    parser.add_argument("--json", help="write the whole comparison (every differing finding) to this file")
    parser.add_argument("--only", default="", help="only the runs whose name contains this (e.g. fixes, TFP3, all])")
    args = parser.parse_args()
    earlier = tempfile.mkdtemp(prefix="findings_versus_")
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", earlier, args.commit], check=True)
    try:
        report = compare(earlier, str(ROOT), args.only)
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", earlier], check=False)
        shutil.rmtree(earlier, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    for outcome in report["runs"]:
        for key in ("only_before", "only_after"):
            for finding in outcome.get(key, [])[:10]:
                print(f"  {key}: {outcome['run']}: {finding}")
        for key, old, new in outcome.get("reworded", [])[:5]:
            print(f"  reworded: {key}\n    before: {old}\n    after:  {new}")
    print(f"{report['findings_differ']} runs with different findings, {report['fixes_differ']} with different "
          f"fixes, {report['wording_changed']} findings reworded, {report['failed']} runs failed")
    if report["failed"]:
        return 2
    return 1 if report["findings_differ"] or report["fixes_differ"] else 0


if __name__ == "__main__":
    sys.exit(main())
