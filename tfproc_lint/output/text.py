"""`path:line:col: CODE message`, the form flake8 prints; 1-based columns. In a notebook,
`path:cell N:line:col: CODE message` (Ruff's form), the line counted within the cell."""

from __future__ import annotations

from tfproc_lint.output import Run


def diagnostic_line(diagnostic, colour=None) -> str:
    colour = colour or (lambda text, _style: text)
    location = f"{diagnostic.path}:{diagnostic.location}:"
    line = f"{colour(location, 'bold')} {colour(diagnostic.code, 'red')} {diagnostic.message}"
    if diagnostic.fix is not None:
        line += f" [{diagnostic.fix.applicability.value} fix: {diagnostic.fix.title}]"
    return line


def summary(run: Run) -> str:
    count = len(run.diagnostics)
    parts = []
    if run.fixed:
        parts.append(f"fixed {run.fixed}")
    if run.fixable:
        parts.append(f"{run.fixable} fixable with --fix")
    if run.hidden_unsafe:
        parts.append(f"{run.hidden_unsafe} fixable with --fix --unsafe-fixes")
    if run.errors:
        parts.append(f"{len(run.errors)} file{'s' * (len(run.errors) != 1)} could not be checked")
    noun = "finding" if count == 1 else "findings"
    if count == 0 and not parts:
        return "All checks passed."
    text = f"Found {count} {noun}" if count else "No findings"
    return text + (f" ({'; '.join(parts)})." if parts else ".")


def render(run: Run, colour=None) -> str:
    lines = [diagnostic_line(d, colour) for d in run.diagnostics]
    lines.append(summary(run))
    return "\n".join(lines) + "\n"
