"""A JSON document: findings (with fixes and their safety), files that could not be checked, counts."""

from __future__ import annotations

import json

from tfproc_lint.links import rule_url
from tfproc_lint.output import Run
from tfproc_lint.rules.base import rule_by_code


def render(run: Run, colour=None) -> str:
    findings = []
    for diagnostic in run.diagnostics:
        entry = diagnostic.to_dict()
        rule = rule_by_code(diagnostic.code)
        entry["rule"] = rule.name if rule else None
        if rule_url(diagnostic.code):  # left out where the package metadata names no repository
            entry["url"] = rule_url(diagnostic.code)
        findings.append(entry)
    document = {
        "findings": findings,
        "errors": [{"path": e.path, "reason": e.reason, "internal": e.internal} for e in run.errors],
        "summary": {
            "findings": len(findings),
            "files_checked": len(run.results) - len(run.errors),
            "files_with_errors": len(run.errors),
            "fixed": run.fixed,
            "fixable": run.fixable,
            "fixable_with_unsafe_fixes": run.fixable_with_unsafe,
        },
    }
    return json.dumps(document, indent=2) + "\n"
