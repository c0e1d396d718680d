"""SARIF 2.1.0: one run with the rules' metadata and help, results with locations and fixes.

Paths are URIs relative to the working directory (`uriBaseId` %SRCROOT%, defined in
`originalUriBaseIds`); files outside it get an absolute `file:` URI. Columns count Unicode code
points (`columnKind`), as the engine's do. Fix edits are character offsets into the checked text;
they become `deletedRegion`s with lines and columns, computed from the text the run carries
(`Run.sources`) or, when it carries none, from the file as it is on disk now.
Files that could not be checked are `toolExecutionNotifications` of the one invocation, which is
then not `executionSuccessful`. Related places (where the runtime started, where the worker is
defined) are `relatedLocations`. In a notebook a region's lines count within the code cell given
in the region's `properties.cell`; notebook findings carry no `fixes` (their edits are applied
cell by cell by `--fix`).
"""

from __future__ import annotations

import bisect
import json
import os
import re
from pathlib import Path
from urllib.parse import quote

from tfproc_lint import __version__
from tfproc_lint.diagnostics import Diagnostic, Severity
from tfproc_lint.docs import render_rule
from tfproc_lint.links import information_url, rule_url
from tfproc_lint.output import Run, relative_path
from tfproc_lint.rules.base import all_rules

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning"}
_NEWLINE = re.compile(r"\r\n|\r|\n")  # Python's line ends; str.splitlines knows more (\f, \x1c, ...)


def render(run: Run, colour=None) -> str:
    return json.dumps(sarif_log(run), indent=2, ensure_ascii=False) + "\n"


def sarif_log(run: Run, cwd: str | None = None) -> dict:
    cwd = os.path.abspath(cwd or os.getcwd())
    rules = all_rules()
    index = {rule.code: number for number, rule in enumerate(rules)}
    positions = _Positions(run, cwd)
    results = [_result(d, index, cwd, positions) for d in run.diagnostics]
    notifications = [{
        "level": "error",
        "message": {"text": f"{error.path}: {error.reason}"},
        "locations": [{"physicalLocation": {"artifactLocation": artifact_location(error.path, cwd)}}],
        "properties": {"internal": error.internal},
    } for error in run.errors]
    sarif_run = {
        "tool": {"driver": _without_none({
            "name": "tfproc-lint",
            "version": __version__,
            "semanticVersion": __version__,
            "informationUri": information_url(),
            "rules": [_rule(rule) for rule in rules],
        })},
        "invocations": [{
            "executionSuccessful": not run.errors,
            "toolExecutionNotifications": notifications,
        }],
        "originalUriBaseIds": {SRCROOT: {"uri": Path(cwd).as_uri().rstrip("/") + "/"}},
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [sarif_run]}


def _without_none(entries: dict) -> dict:
    """Links absent from the package metadata are left out, never written as relative paths."""
    return {key: value for key, value in entries.items() if value is not None}


def _rule(rule) -> dict:
    page = render_rule(rule)
    return _without_none({
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": " ".join(rule.what_it_does.split())},
        "help": {"text": page, "markdown": page},
        "helpUri": rule_url(rule.code),
        # SARIF's `enabled`: false for an opt-in rule, which runs only when selected by its code.
        "defaultConfiguration": {"level": LEVELS[rule.severity], "enabled": rule.default_enabled},
        "properties": {"fixAvailability": rule.fix_availability.value, "tags": ["tensorflow", "multiprocessing"]},
    })


def region(line: int, col: int, end_line: int | None, end_col: int | None, cell: int | None) -> dict:
    """A SARIF region; in a notebook its lines count within the code cell named in
    `properties.cell` (1-based among all the notebook's cells)."""
    found = {"startLine": line, "startColumn": col + 1}
    if end_line is not None and end_col is not None:
        found.update(endLine=end_line, endColumn=end_col + 1)
    if cell is not None:
        found["properties"] = {"cell": cell}
    return found


def _result(diagnostic: Diagnostic, index: dict, cwd: str, positions: _Positions) -> dict:
    location = artifact_location(diagnostic.path, cwd)
    found = region(diagnostic.line, diagnostic.col, diagnostic.end_line, diagnostic.end_col, diagnostic.cell)
    result = {"ruleId": diagnostic.code}
    if diagnostic.code in index:
        result["ruleIndex"] = index[diagnostic.code]
    result.update({
        "level": LEVELS[diagnostic.severity],
        "message": {"text": diagnostic.full_message},
        "locations": [{"physicalLocation": {"artifactLocation": location, "region": found}}],
    })
    if rule_url(diagnostic.code):
        result["properties"] = {"documentation": rule_url(diagnostic.code)}
    if diagnostic.related:
        result["relatedLocations"] = [{
            "id": number,
            "physicalLocation": {"artifactLocation": (dict(location) if r.path is None
                                                      else artifact_location(r.path, cwd)),
                                 "region": region(r.line, r.col, r.end_line, r.end_col, r.cell)},
            "message": {"text": r.message},
        } for number, r in enumerate(diagnostic.related, start=1)]
    fix = diagnostic.fix
    if fix is not None and fix.edits:
        to_position = positions.for_path(diagnostic.path)
        if to_position is not None:
            replacements = [{
                "deletedRegion": _edit_region(to_position, edit.start, edit.end),
                "insertedContent": {"text": edit.content},
            } for edit in sorted(fix.edits)]
            safety = fix.applicability.value
            result["fixes"] = [{
                "description": {"text": f"{fix.title} ({safety} fix)"},
                "artifactChanges": [{"artifactLocation": dict(location), "replacements": replacements}],
                "properties": {"applicability": safety},
            }]
    return result


def _edit_region(to_position, start: int, end: int) -> dict:
    start_line, start_column = to_position(start)
    end_line, end_column = to_position(end)
    return {"startLine": start_line, "startColumn": start_column, "endLine": end_line, "endColumn": end_column}


class _Positions:
    """Offset -> (1-based line, 1-based column) for each file whose findings carry fixes."""

    def __init__(self, run: Run, cwd: str) -> None:
        self._sources = run.sources
        self._cwd = cwd
        self._cache: dict[str, object] = {}

    def for_path(self, path: str):
        if path not in self._cache:
            text = self._sources.get(path)
            if text is None:
                text = _read(os.path.join(self._cwd, path))
            self._cache[path] = None if text is None else line_index(text)
        return self._cache[path]


def line_index(text: str):
    """A function from a character offset of `text` to its (line, column), both 1-based."""
    starts = [0] + [match.end() for match in _NEWLINE.finditer(text)]

    def to_position(offset: int) -> tuple[int, int]:
        offset = max(0, min(offset, len(text)))
        line = bisect.bisect_right(starts, offset) - 1
        return line + 1, offset - starts[line] + 1

    return to_position


def _read(path: str) -> str | None:
    from tfproc_lint.source import SourceError, read_source

    try:
        return read_source(Path(path)).text
    except SourceError:
        return None


def artifact_location(path: str, cwd: str) -> dict:
    """A URI relative to `cwd` (forward slashes, percent-encoded) or, outside it, an absolute one."""
    relative = relative_path(path, cwd)
    if os.path.isabs(relative):
        return {"uri": Path(os.path.abspath(os.path.join(cwd, path))).as_uri()}
    return {"uri": quote(relative), "uriBaseId": SRCROOT}
