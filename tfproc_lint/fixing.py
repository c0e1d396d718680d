"""Apply fixes: edits from the rules, applied in rounds until nothing applicable is left.

Guarantees: the result parses (a round whose result does not parse is discarded); running the
fixer again changes nothing; files are written atomically keeping encoding, BOM, newline style
and permissions, and a file that cannot be fixed is left byte-identical.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from tfproc_lint.config import Config
from tfproc_lint.diagnostics import Applicability, Diagnostic, Edit
from tfproc_lint.engine import DEFAULT_CONFIG, SourceError, lint_program, lint_source, parse, read_source
from tfproc_lint.files import is_notebook
from tfproc_lint.notebook import CellBoundaryError, Program, read_notebook, write_notebook

MAX_ROUNDS = 10


@dataclass
class FixOutcome:
    source: str
    applied: list[Diagnostic] = field(default_factory=list)
    remaining: list[Diagnostic] = field(default_factory=list)
    # A notebook's changed code cells: (cell number, source before, source after).
    cells: list[tuple[int, str, str]] = field(default_factory=list)

    @property
    def unsafe_available(self) -> int:
        return sum(1 for d in self.remaining if d.fix and d.fix.applicability is Applicability.UNSAFE)


def applicable(diagnostic: Diagnostic, unsafe: bool) -> bool:
    return diagnostic.fix is not None and (unsafe or diagnostic.fix.applicability is Applicability.SAFE)


def apply_edits(source: str, edits: list[Edit]) -> str:
    for edit in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
        source = source[: edit.start] + edit.content + source[edit.end:]
    return source


def choose(diagnostics: list[Diagnostic], unsafe: bool) -> tuple[list[Diagnostic], list[Edit]]:
    """The fixes of one round: applicable, and not overlapping a fix taken before them."""
    chosen, edits, taken = [], [], []
    for diagnostic in diagnostics:
        if not applicable(diagnostic, unsafe):
            continue
        spans = [(e.start, e.end) for e in diagnostic.fix.edits]
        if any(s < te and ts < e or s == e == ts for s, e in spans for ts, te in taken):
            continue  # overlaps a fix taken this round: next round
        chosen.append(diagnostic)
        edits.extend(diagnostic.fix.edits)
        taken.extend(spans)
    return chosen, edits


def fix_source(source: str, path: str = "<string>", config: Config = DEFAULT_CONFIG,
               unsafe: bool = False) -> FixOutcome:
    outcome = FixOutcome(source)
    diagnostics = lint_source(source, path, config, fix_edits=True)
    for _ in range(MAX_ROUNDS):
        chosen, edits = choose(diagnostics, unsafe)
        if not chosen:
            break
        candidate = apply_edits(outcome.source, edits)
        try:
            parse(candidate)
        except SourceError:
            break  # never write a file that does not parse
        if candidate == outcome.source:
            break
        outcome.source = candidate
        outcome.applied.extend(chosen)
        diagnostics = lint_source(candidate, path, config, fix_edits=True)
    outcome.remaining = diagnostics
    return outcome


def fix_file(path: Path, config: Config = DEFAULT_CONFIG, unsafe: bool = False,
             write: bool = True, display: str | None = None) -> tuple[FixOutcome, str]:
    """Fix one file; returns the outcome and the original text. Raises SourceError on bad input."""
    if is_notebook(path):
        return fix_notebook_file(path, config, unsafe, write, display)
    decoded = read_source(path)
    outcome = fix_source(decoded.text, display or str(path), config, unsafe)
    if write and outcome.source != decoded.text:
        data = outcome.source.encode(decoded.encoding)
        if decoded.bom:
            data = b"\xef\xbb\xbf" + data
        write_atomically(path, data)
    return outcome, decoded.text


def fix_program(program: Program, path: str, config: Config = DEFAULT_CONFIG,
                unsafe: bool = False) -> tuple[Program, list[Diagnostic], list[Diagnostic]]:
    """A notebook's program after its fixes, each applied within its cell (a fix that would span
    cells is never offered): (program, applied, remaining findings with program positions)."""
    applied: list[Diagnostic] = []
    diagnostics = lint_program(program, path, config)
    for _ in range(MAX_ROUNDS):
        chosen, edits = choose(diagnostics, unsafe)
        if not chosen:
            break
        try:
            candidate = program.with_edits(edits)
            parse(candidate.text)
        except (CellBoundaryError, SourceError):
            break  # never write cells that do not parse, nor edits that leave their cell
        if candidate.text == program.text:
            break
        program = candidate
        applied.extend(chosen)
        diagnostics = lint_program(program, path, config)
    return program, applied, diagnostics


def fix_notebook_file(path: Path, config: Config = DEFAULT_CONFIG, unsafe: bool = False,
                      write: bool = True, display: str | None = None) -> tuple[FixOutcome, str]:
    """Fix a notebook's code cells; outputs, metadata and the JSON layout are kept byte for byte,
    and a notebook without an applied fix is not written."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise SourceError(f"cannot read: {error.strerror or error}") from None
    notebook = read_notebook(data)
    display = display or str(path)
    outcome = FixOutcome(notebook.raw)
    if notebook.program is None:
        return outcome, notebook.raw
    before = notebook.program.sources()
    program, outcome.applied, remaining = fix_program(notebook.program, display, config, unsafe)
    outcome.remaining = [program.to_cells(d) for d in remaining]
    after = program.sources()
    outcome.cells = [(number, before[number], after[number]) for number in before if before[number] != after[number]]
    if outcome.cells:
        data = write_notebook(notebook, after)
        outcome.source = data.decode("utf-8-sig")
        if write:
            write_atomically(path, data)
    return outcome, notebook.raw


def write_atomically(path: Path, data: bytes) -> None:
    """Write to a temporary file beside `path`, keep its permissions, then rename over it."""
    target = Path(os.path.realpath(path))
    mode = target.stat().st_mode
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode & 0o7777)
        os.replace(temporary, target)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
