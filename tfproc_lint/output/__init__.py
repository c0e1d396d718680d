"""Output formats. Each module renders a `Run` (what a check or fix run found) to text."""

from __future__ import annotations

from dataclasses import dataclass, field

from tfproc_lint.diagnostics import Applicability, Diagnostic, FileError, FileResult


@dataclass
class Run:
    results: list[FileResult]
    fixed: int = 0  # fixes applied by --fix
    unsafe_fixes: bool = False  # whether unsafe fixes were enabled
    diffs: list[str] = field(default_factory=list)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return [d for result in self.results for d in result.diagnostics]

    @property
    def errors(self) -> list[FileError]:
        return [result.error for result in self.results if result.error is not None]

    @property
    def fixable(self) -> int:
        """Remaining findings whose fix would apply with the current options."""
        return sum(1 for d in self.diagnostics if d.fix and (
            self.unsafe_fixes or d.fix.applicability is Applicability.SAFE))

    @property
    def hidden_unsafe(self) -> int:
        """Remaining findings fixable only with --unsafe-fixes."""
        if self.unsafe_fixes:
            return 0
        return sum(1 for d in self.diagnostics if d.fix and d.fix.applicability is Applicability.UNSAFE)


def formats() -> dict:
    from tfproc_lint.output import json_format, text

    return {"text": text.render, "json": json_format.render}
