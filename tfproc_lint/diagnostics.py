"""Plain data returned by the engine to every front end (CLI, flake8 plugin, probe, tests)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from tfproc_lint.records import record


class Applicability(str, enum.Enum):
    """Ruff's fix-safety model: only safe fixes are applied without `--unsafe-fixes`."""

    SAFE = "safe"
    UNSAFE = "unsafe"


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, order=True)
class Edit:
    """Replace the text between two character offsets of the source with `content`."""

    start: int
    end: int
    content: str


@record
class Fix:
    title: str
    applicability: Applicability
    edits: tuple[Edit, ...] | None  # None: not computed (see engine.lint_source's fix_edits)
    # Other findings this rewrite fixes too, as the engine compares findings across rewrites
    # (engine.finding_key): a setting in forked workers, with the spawn fix.
    also_fixes: tuple[tuple[str, tuple], ...] = ()

    def to_dict(self) -> dict:
        return {
            "title": self.title,
            "applicability": self.applicability.value,
            "edits": None if self.edits is None else [
                {"start": e.start, "end": e.end, "content": e.content} for e in self.edits],
        }


@dataclass(frozen=True)
class Related:
    """A second place a finding points to ("TensorFlow runtime started here"); 1-based line,
    0-based column like `Diagnostic`, and in a notebook the cell the line counts in."""

    message: str
    line: int
    col: int
    end_line: int
    end_col: int
    cell: int | None = None
    path: str | None = None  # another file of the project (None: the finding's own file)

    def to_dict(self) -> dict:
        return {"message": self.message, "path": self.path, "cell": self.cell, "line": self.line,
                "column": self.col + 1, "end_line": self.end_line, "end_column": self.end_col + 1}


@dataclass(frozen=True)
class Diagnostic:
    """One finding. `line` is 1-based, `col` 0-based (flake8 and bugbear convention). In a notebook,
    `cell` is the cell's 1-based number among all its cells and `line` counts within that cell."""

    code: str
    message: str
    path: str
    line: int
    col: int
    severity: Severity = Severity.ERROR
    fix: Fix | None = None
    end_line: int | None = None
    end_col: int | None = None
    related: tuple[Related, ...] = ()
    cell: int | None = None
    # The fix state, kept as data until output renders it (`full_message`): None when a fix is
    # offered; otherwise a manual edit is required, and this says why the fix was refused ("the
    # rewrite would add TFP201 on line 12"), or is "" when the rule has no fix for this finding.
    manual_edit: str | None = None
    # The finding's identity across rewrites (rules.base.Finding.key), which the fix loop compares
    # with the code (engine.finding_key); no front end shows it, and equality leaves it out.
    key: tuple = field(default=(), compare=False, repr=False)

    @property
    def full_message(self) -> str:
        """The message as the formatters print it: the rule's message, then "(manual edit
        required)" or "(manual edit required: why)" when no fix is offered."""
        if self.manual_edit is None:
            return self.message
        if self.manual_edit:
            return f"{self.message} (manual edit required: {self.manual_edit})"
        return f"{self.message} (manual edit required)"

    @property
    def sort_key(self) -> tuple:
        return (self.path, self.cell or 0, self.line, self.col, self.code)

    @property
    def location(self) -> str:
        """`line:col`, or `cell N:line:col` in a notebook (Ruff's form); 1-based."""
        where = f"{self.line}:{self.col + 1}"
        return f"cell {self.cell}:{where}" if self.cell is not None else where

    def to_dict(self) -> dict:
        return {
            "code": self.code,
            "message": self.full_message,
            "path": self.path,
            "cell": self.cell,
            "line": self.line,
            "column": self.col + 1,
            "end_line": self.end_line,
            "end_column": None if self.end_col is None else self.end_col + 1,
            "severity": self.severity.value,
            "fix": None if self.fix is None else self.fix.to_dict(),
            "related": [r.to_dict() for r in self.related],
        }


@record
class FileError:
    """A file that could not be read or parsed; reported in one line, the run goes on."""

    path: str
    reason: str
    internal: bool = False  # a bug in tfproc-lint rather than bad input


@dataclass
class FileResult:
    path: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    error: FileError | None = None
