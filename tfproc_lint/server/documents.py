"""What the server lints: a snapshot of one open document, a Python file or a notebook's code
cells, taken on the event loop and handed to the worker thread; and the engine's answers for it.

No pygls or lsprotocol here: plain data in, the engine's `Diagnostic`s out.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from contextlib import nullcontext
from dataclasses import dataclass, field

from tfproc_lint.config import Config
from tfproc_lint.dependents import import_closure
from tfproc_lint.diagnostics import Applicability, Diagnostic
from tfproc_lint.engine import lint_notebook, lint_source, text_edits
from tfproc_lint.fixing import apply_edits, fix_program, fix_source, fix_through, plan_program, plan_source
from tfproc_lint.noqa import noqa_edits
from tfproc_lint.notebook import CellBoundaryError, Program, program_of
from tfproc_lint.project import project_for
from tfproc_lint.project_layout import layout_for
from tfproc_lint.source import SourceError

# Larger documents are not linted as you type: on this project's 2-core machine, a 10,000-line file
# (160,000 characters) that passes the pre-filter took 16 s, and one lint thread serves every
# document. `tfproc-lint check` still reads them.
MAX_CHARACTERS = 200_000


@dataclass(frozen=True)
class Cell:
    uri: str
    number: int  # 1-based among all the notebook's cells, markdown included (as the CLI counts)
    text: str
    version: int | None = None


@dataclass(frozen=True)
class Snapshot:
    """A Python document (`cells` empty) or a notebook (`cells`: its Python code cells)."""

    uri: str
    path: str  # as the engine names the file in messages
    version: int | None
    text: str = ""
    cells: tuple[Cell, ...] = ()
    notebook: bool = False

    @property
    def size(self) -> int:
        return sum(len(cell.text) for cell in self.cells) if self.notebook else len(self.text)

    def program(self) -> Program:
        return program_of([(cell.number, cell.text) for cell in self.cells])

    def cell(self, uri: str) -> Cell | None:
        return next((cell for cell in self.cells if cell.uri == uri), None)

    def cell_uri(self, number: int | None) -> str:
        cell = next((cell for cell in self.cells if cell.number == number), None)
        return cell.uri if cell is not None else self.uri


@dataclass
class Findings:
    """The findings of one snapshot, per document URI (each cell of a notebook is a document)."""

    snapshot: Snapshot
    by_uri: dict[str, list[Diagnostic]] = field(default_factory=dict)
    error: str | None = None  # why nothing was linted (bad input), one line
    # The project's files the findings depend on: the modules whose summaries they used, with the
    # digest of the content read; every file the document's imports reach (read as text, so that a
    # change that makes one matter is seen too), with its stamp (`dependents.file_stamp`; None: not
    # there).
    uses: Mapping[str, str | tuple | None] = field(default_factory=dict)


def check_size(snapshot: Snapshot) -> None:
    if snapshot.size > MAX_CHARACTERS:
        raise SourceError(f"not checked while editing: {snapshot.size:,} characters (the limit is "
                          f"{MAX_CHARACTERS:,}); run `tfproc-lint check` on it")


def lint(snapshot: Snapshot, config: Config) -> Findings:
    """Findings for publishing at once: each fix as its rule's fix builder judges it on this text
    (titles, no edits). `planned` then says what `check` lists. Bad input gives no findings and a
    reason."""
    empty = {cell.uri: [] for cell in snapshot.cells} if snapshot.notebook else {snapshot.uri: []}
    findings = Findings(snapshot, empty)
    project = project_for(snapshot.path, config) if os.path.isfile(snapshot.path) else None
    try:
        check_size(snapshot)
        with project.lint_scope() if project is not None else nullcontext() as used:
            if snapshot.notebook:
                for diagnostic in lint_notebook(snapshot.program(), snapshot.path, config):
                    findings.by_uri.setdefault(snapshot.cell_uri(diagnostic.cell), []).append(diagnostic)
            else:
                findings.by_uri[snapshot.uri] = lint_source(snapshot.text, snapshot.path, config)
        findings.uses = {**reached(snapshot, config), **dict(used or ())}
    except SourceError as error:
        findings.error = str(error)
    return findings


def reached(snapshot: Snapshot, config: Config) -> dict[str, tuple | None]:
    """The project files the document's imports reach, directly or through each other, with their
    stamps ({} outside a project, or with project analysis off)."""
    layout = layout_for(snapshot.path, config.src) if config.project_analysis and os.path.isfile(snapshot.path) \
        else None
    if layout is None:
        return {}
    return import_closure(snapshot.program().text if snapshot.notebook else snapshot.text, snapshot.path, layout)


def may_change_when_planned(findings: Findings) -> bool:
    """Whether `planned` can say anything else: only where a finding has a fix (`fixing.plan`)."""
    return any(d.fix is not None for found in findings.by_uri.values() for d in found)


def planned(snapshot: Snapshot, config: Config) -> Findings:
    """The findings as `tfproc-lint check` lists them: each with the fix that `--fix` would apply
    (`fixing.plan_source`, the CLI's own step), including one that applies only after another
    fix, and without one the fix loop would not apply."""
    findings = Findings(snapshot, {cell.uri: [] for cell in snapshot.cells} if snapshot.notebook else {
        snapshot.uri: []})
    try:
        located, program = detailed(snapshot, config)
    except SourceError as error:
        findings.error = str(error)
        return findings
    for item in located:
        shown = program.to_cells(item.diagnostic) if program is not None else item.diagnostic
        findings.by_uri.setdefault(item.uri, []).append(shown)
    return findings


# Fixes: each an edit per document, as {uri: (text before, text after)} -------------------------
Change = dict  # uri -> (before, after)


@dataclass(frozen=True)
class Located:
    """A finding with edits, and where it lies in the document the editor shows."""

    diagnostic: Diagnostic  # with edits; for a notebook, in the joined program's positions
    uri: str
    line: int  # 1-based in that document
    end_line: int
    index: int  # among the snapshot's findings, as `fixing.fix_through` counts them


# Editors ask for code actions whenever the cursor moves: the answers for the same text are kept.
@functools.lru_cache(maxsize=8)
def detailed(snapshot: Snapshot, config: Config) -> tuple[list[Located], Program | None]:
    """Every finding as `check` lists it, with its fix's edits where the fix applies to this text,
    positioned in its document (shared: do not modify)."""
    check_size(snapshot)
    if not snapshot.notebook:
        found = plan_source(snapshot.text, snapshot.path, config)
        return [Located(d, snapshot.uri, d.line, d.end_line or d.line, index) for index, d in enumerate(found)], None
    program = snapshot.program()
    located = []
    for index, diagnostic in enumerate(plan_program(program, snapshot.path, config, per_cell=False)):
        cell, line = program.locate(diagnostic.line)
        end_cell, end_line = program.locate(diagnostic.end_line or diagnostic.line)
        located.append(Located(diagnostic, snapshot.cell_uri(cell), line, end_line if end_cell == cell else line,
                               index))
    return located, program


def fix_after_others(snapshot: Snapshot, config: Config, program: Program | None,
                     located: Located) -> tuple[Change, list[Diagnostic]]:
    """A fix that applies only after other fixes (no edits of its own on this text): the change
    the fix loop makes up to and including it, and the other fixes it applies; ({}, []) if none."""
    unsafe = located.diagnostic.fix.applicability is Applicability.UNSAFE
    result = fix_through(program if program is not None else snapshot.text, snapshot.path, config,
                         located.index, unsafe)
    if result is None:
        return {}, []
    after, others = result
    if program is None:
        return ({snapshot.uri: (snapshot.text, after)} if after != snapshot.text else {}), others
    return _cell_changes(snapshot, after.sources()), others


def apply(snapshot: Snapshot, program: Program | None, edits) -> Change:
    """The documents changed by `edits` (offsets into the Python text or the joined program)."""
    if program is None:
        after = apply_edits(snapshot.text, list(edits))
        return {snapshot.uri: (snapshot.text, after)} if after != snapshot.text else {}
    try:
        sources = program.with_edits(edits).sources()
    except CellBoundaryError:
        return {}
    return _cell_changes(snapshot, sources)


def _cell_changes(snapshot: Snapshot, sources: dict[int, str]) -> Change:
    changes = {}
    for cell in snapshot.cells:
        after = sources.get(cell.number, cell.text)
        if after != cell.text:
            changes[cell.uri] = (cell.text, after)
    return changes


def noqa_change(snapshot: Snapshot, program: Program | None, located: Located) -> Change:
    """`# noqa: CODE` added to the finding's line; {} where no comment can go."""
    text = snapshot.text if program is None else program.text
    edits, _skipped = noqa_edits(text, [located.diagnostic])
    return apply(snapshot, program, edits) if edits else {}


@functools.lru_cache(maxsize=8)
def fix_all(snapshot: Snapshot, config: Config) -> tuple[Change, int]:
    """Every safe fix, applied in rounds as `tfproc-lint check --fix` does, and how many applied."""
    check_size(snapshot)
    if not snapshot.notebook:
        outcome = fix_source(snapshot.text, snapshot.path, config)
        changed = outcome.source != snapshot.text
        return ({snapshot.uri: (snapshot.text, outcome.source)} if changed else {}), len(outcome.applied)
    program, applied, _remaining = fix_program(snapshot.program(), snapshot.path, config)
    return _cell_changes(snapshot, program.sources()), len(applied)


def line_edits(before: str, after: str):
    """The smallest line-level edits from `before` to `after` (character offsets into `before`)."""
    return text_edits(before, after)
