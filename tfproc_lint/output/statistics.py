"""`--statistics`: how many findings per rule, most first, in Ruff's layout:

    3  TFP201  [ ] runtime-initialised-before-fork
    1  TFP301  [*] missing-worker-initializer

`[*]`: at least one of them has a fix that `--fix` applies with the options given (with
`--unsafe-fixes`, unsafe ones count too). The text form ends with the summary line; `--format json`
gives a list of {code, name, count, fixable}.
"""

from __future__ import annotations

import json
from collections import Counter

from tfproc_lint.diagnostics import Applicability
from tfproc_lint.output import Run
from tfproc_lint.output.text import summary

FORMATS = ("text", "json")


def rows(run: Run) -> list[dict]:
    counts = Counter(d.code for d in run.diagnostics)
    fixable = Counter(d.code for d in run.diagnostics if d.fix and (
        run.unsafe_fixes or d.fix.applicability is Applicability.SAFE))
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [{"code": code, "name": _name(code), "count": count, "fixable": fixable[code]} for code, count in ordered]


def _name(code: str) -> str:
    from tfproc_lint.rules.base import rule_by_code  # the rules import LibCST: only when there are rows

    rule = rule_by_code(code)
    return rule.name if rule else ""


def render(run: Run, format_name: str = "text", colour=None) -> str:
    table = rows(run)
    if format_name == "json":
        return json.dumps(table, indent=2) + "\n"
    paint = colour or (lambda text, _style: text)
    width = max((len(str(row["count"])) for row in table), default=1)
    lines = [f"{str(row['count']).rjust(width + 2)}  {paint(row['code'], 'red')}  "
             f"{'[*]' if row['fixable'] else '[ ]'} {row['name']}" for row in table]
    lines.append(summary(run))
    return "\n".join(lines) + "\n"
