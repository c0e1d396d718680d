"""What the probe observed, per rule, read back from a report.json (default: the last run's).

    from runtime_probe.evidence import evidence
    for line in evidence("probe-report/report.json")["TFP201"]["lines"]: ...

`report.write` also writes the part the rule pages quote as evidence.json next to report.json:
the linter's docs (tfproc_lint/docs.py) read that file as data and never import the probe.
"""

from __future__ import annotations

import json
from pathlib import Path

DEFAULT_REPORT = Path("probe-report") / "report.json"
EVIDENCE_FILE = "evidence.json"
# The columns of a scenario row that the rule pages show.
_PAGE_COLUMNS = ("name", "kind", "expected", "observed", "verdict")


def evidence(report_path: Path | str = DEFAULT_REPORT) -> dict[str, dict]:
    """Per rule: runtime status, when and where it was observed, and one line per scenario."""
    return per_rule(json.loads(Path(report_path).read_text(encoding="utf-8")))


def per_rule(report: dict) -> dict[str, dict]:
    """The same, from a report already read."""
    env = report["environment"]
    observed_on = f"TensorFlow {env['tensorflow']}, Python {env['python']}, {env['cpus']} CPUs, {env['created']}"
    result = {}
    for code, info in report["rules"].items():
        rows = [row for row in report["scenarios"] if row["rule"] == code]
        lines = [
            f"{row['name']} ({row['kind']}): expected {row['expected']}; observed {row['observed']} "
            f"-> {row['verdict']}"
            for row in rows
        ]
        result[code] = {"status": info["status"], "observed_on": observed_on, "lines": lines, "rows": rows}
    return result


def for_rule(code: str, report_path: Path | str = DEFAULT_REPORT) -> list[str]:
    """The evidence lines for one rule code; empty when the report has none."""
    return evidence(report_path).get(code, {}).get("lines", [])


def for_docs(report: dict) -> dict[str, dict]:
    """What evidence.json holds: per rule, the status, where it was observed and the scenario rows
    (name, kind, expected, observed, verdict)."""
    return {code: {"status": info["status"], "observed_on": info["observed_on"],
                   "rows": [{column: row[column] for column in _PAGE_COLUMNS} for row in info["rows"]]}
            for code, info in per_rule(report).items()}


def write_for_docs(report: dict, path: Path) -> None:
    path.write_text(json.dumps(for_docs(report), indent=2, default=str) + "\n", encoding="utf-8")
