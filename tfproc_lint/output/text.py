"""`path:line:col: CODE message`, the form flake8 prints; 1-based columns. In a notebook,
`path:cell N:line:col: CODE message` (Ruff's form), the line counted within the cell. Findings of
rules whose severity is a warning read `CODE warning: message`, the code in yellow (errors: red)."""

from __future__ import annotations

from tfproc_lint.diagnostics import Severity
from tfproc_lint.output import Run


def diagnostic_line(diagnostic, colour=None) -> str:
    colour = colour or (lambda text, _style: text)
    location = f"{diagnostic.path}:{diagnostic.location}:"
    if diagnostic.severity is Severity.WARNING:
        code = f"{colour(diagnostic.code, 'yellow')} {colour('warning:', 'yellow')}"
    else:
        code = colour(diagnostic.code, "red")
    line = f"{colour(location, 'bold')} {code} {diagnostic.full_message}"
    if diagnostic.fix is not None:
        line += f" [{diagnostic.fix.applicability.value} fix: {diagnostic.fix.title}]"
    return line


def summary(run: Run) -> str:
    """'Found 6 findings (2 fixable with --fix, 5 with --fix --unsafe-fixes).': each count is a
    total, what that command would fix; `check` lists exactly those fixes."""
    count = len(run.diagnostics)
    parts = []
    if run.fixed:
        parts.append(f"fixed {run.fixed}")
    parts.extend(_fixable(run, "fixable with --fix", "with --fix --unsafe-fixes", more=bool(run.fixed)))
    if run.errors:
        parts.append(f"{len(run.errors)} file{'s' * (len(run.errors) != 1)} could not be checked")
    noun = "finding" if count == 1 else "findings"
    if count == 0 and not parts:
        return "All checks passed."
    text = f"Found {count} {noun}" if count else "No findings"
    return text + (f" ({'; '.join(parts)})." if parts else ".")


def _fixable(run: Run, safe_words: str, unsafe_words: str, more: bool = False) -> list[str]:
    """The fix counts of a summary: 'N fixable with --fix', then the total with unsafe fixes."""
    safe, total = run.safe_fixable, run.fixable_with_unsafe
    if run.unsafe_fixes:
        return [f"{total} fixable with --fix --unsafe-fixes"] if total else []
    if more and not safe and total:  # after --fix: what is left is for the unsafe fixes
        return [f"{total} more fixable with --fix --unsafe-fixes"]
    parts = [f"{safe} {safe_words}"] if safe else []
    if total > safe:
        parts.append(f"{total} {unsafe_words}" if safe else f"{total} fixable {unsafe_words}")
    return [", ".join(parts)] if parts else []


def diff_summary(run: Run) -> str:
    """What `--diff` would do: '2 fixes would be applied (5 with --unsafe-fixes); 1 finding has no
    fix (manual edit required).' The counts are totals, as `check` gives them."""
    text = f"{run.fixed} fix{'es' * (run.fixed != 1)} would be applied"
    if run.hidden_unsafe:
        text += f" ({run.fixed + run.hidden_unsafe} with --unsafe-fixes)"
    parts = [text]
    manual = sum(1 for d in run.diagnostics if d.fix is None)
    if manual:
        parts.append(f"{manual} finding{' has' if manual == 1 else 's have'} no fix (manual edit required)")
    return "; ".join(parts) + "."


def render(run: Run, colour=None) -> str:
    lines = [diagnostic_line(d, colour) for d in run.diagnostics]
    lines.append(summary(run))
    return "\n".join(lines) + "\n"
