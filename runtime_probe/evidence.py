"""What the probe observed, per rule, read back from a report.json (default: the last run's).

    from runtime_probe.evidence import evidence
    for line in evidence("probe-report/report.json")["TFP201"]["lines"]: ...
"""

from __future__ import annotations

import json
from pathlib import Path

DEFAULT_REPORT = Path("probe-report") / "report.json"


def evidence(report_path: Path | str = DEFAULT_REPORT) -> dict[str, dict]:
    """Per rule: runtime status, when and where it was observed, and one line per scenario."""
    report = json.loads(Path(report_path).read_text(encoding="utf-8"))
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
