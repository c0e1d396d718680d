"""GitHub Actions workflow commands: one `::error` / `::warning` annotation per finding.

`::error file=PATH,line=L,col=C,endLine=L2,endColumn=C2,title=TFP101 name::message`, with the
escaping of GitHub's toolkit (@actions/core): `%`, CR and LF in the message, and also `:` and
`,` in property values. Columns are 1-based; paths are relative to the working directory (the
workspace, in a workflow). A file that could not be checked gets `::error file=PATH::reason`.
In a notebook, `line` counts within the code cell that the title names (`TFP204 ... (cell 3)`), not
within the .ipynb file's JSON: GitHub shows the annotation at that line of the file, read the cell
from the title.
"""

from __future__ import annotations

from tfproc_lint.diagnostics import Severity
from tfproc_lint.output import Run, relative_path
from tfproc_lint.rules.base import rule_by_code


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, properties: dict, message: str) -> str:
    props = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties.items() if value is not None)
    return f"::{name} {props}::{escape_data(message)}" if props else f"::{name}::{escape_data(message)}"


def _title(diagnostic, rule) -> str:
    title = f"{diagnostic.code} {rule.name}" if rule else diagnostic.code
    return f"{title} (cell {diagnostic.cell})" if diagnostic.cell is not None else title


def render(run: Run, colour=None) -> str:
    lines = []
    for diagnostic in run.diagnostics:
        rule = rule_by_code(diagnostic.code)
        properties = {
            "file": relative_path(diagnostic.path),
            "line": diagnostic.line,
            "col": diagnostic.col + 1,
            "endLine": diagnostic.end_line,
            "endColumn": None if diagnostic.end_col is None else diagnostic.end_col + 1,
            "title": _title(diagnostic, rule),
        }
        level = "warning" if diagnostic.severity is Severity.WARNING else "error"
        lines.append(command(level, properties, diagnostic.full_message))
    for error in run.errors:
        lines.append(command("error", {"file": relative_path(error.path)}, error.reason))
    return "".join(line + "\n" for line in lines)
