"""Output formats. Each module renders a `Run` (what a check or fix run found) to text."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from tfproc_lint.diagnostics import Applicability, Diagnostic, FileError, FileResult


@dataclass
class Run:
    results: list[FileResult]
    fixed: int = 0  # fixes applied by --fix
    unsafe_fixes: bool = False  # whether unsafe fixes were enabled
    diffs: list[str] = field(default_factory=list)
    # Text the remaining findings' offsets refer to, by path, where the run has it (after --fix);
    # formats that turn fix offsets into lines and columns (SARIF) read other files from disk.
    sources: dict[str, str] = field(default_factory=dict)

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
    def safe_fixable(self) -> int:
        """Remaining findings that `--fix` would fix."""
        return sum(1 for d in self.diagnostics if d.fix and d.fix.applicability is Applicability.SAFE)

    @property
    def fixable_with_unsafe(self) -> int:
        """Remaining findings that `--fix --unsafe-fixes` would fix (a total, safe ones included)."""
        return sum(1 for d in self.diagnostics if d.fix)

    @property
    def hidden_unsafe(self) -> int:
        """How many more `--unsafe-fixes` would fix, when it is not given."""
        return 0 if self.unsafe_fixes else self.fixable_with_unsafe - self.safe_fixable


def relative_path(path: str, cwd: str | None = None) -> str:
    """`path` relative to `cwd` with forward slashes; absolute (forward slashes) when outside it."""
    cwd = os.path.abspath(cwd or os.getcwd())
    absolute = os.path.abspath(os.path.join(cwd, path))
    try:
        relative = os.path.relpath(absolute, cwd)
    except ValueError:  # pragma: no cover - another drive on Windows
        relative = absolute
    if os.path.isabs(relative) or relative.split(os.sep, 1)[0] == os.pardir:
        return absolute.replace(os.sep, "/")
    return relative.replace(os.sep, "/")


FORMATS = {"text": "text", "full": "full", "json": "json_format", "sarif": "sarif", "github": "github"}  # name: module


def renderer(name: str):
    """The render function of one format; its module (SARIF's pulls in the rule docs) is imported
    only when that format is asked for."""
    import importlib

    return importlib.import_module(f"tfproc_lint.output.{FORMATS[name]}").render
