"""Apply fixes: edits from the rules, applied in rounds until nothing applicable is left.

Guarantees: the result parses (a round whose result does not parse is discarded); running the
fixer again changes nothing; files are written atomically keeping encoding, BOM, newline style
and permissions, and a file that cannot be fixed is left byte-identical.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from tfproc_lint.config import Config
from tfproc_lint.diagnostics import Applicability, Diagnostic, Edit, Fix
from tfproc_lint.engine import (
    DEFAULT_CONFIG, SourceError, finding_key, lint_program, lint_source, read_source,
)
from tfproc_lint.files import is_notebook
from tfproc_lint.notebook import CellBoundaryError, Program, read_notebook, write_notebook
from tfproc_lint.parsing import parse

MAX_ROUNDS = 10


@dataclass
class FixOutcome:
    source: str
    applied: list[Diagnostic] = field(default_factory=list)
    # What `check` would list on the result: each fix is one the next `--fix` would apply.
    remaining: list[Diagnostic] = field(default_factory=list)
    # A notebook's changed code cells: (cell number, source before, source after).
    cells: list[tuple[int, str, str]] = field(default_factory=list)


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


@dataclass
class _Document:
    """What the fix loop rewrites: a module's text, or a notebook's program."""

    lint: Callable  # state -> diagnostics with fix edits
    apply: Callable  # (state, edits) -> new state; raises SourceError or CellBoundaryError


def _module_document(path: str, config: Config) -> _Document:
    def apply(source: str, edits: list[Edit]) -> str:
        candidate = apply_edits(source, edits)
        parse(candidate)  # never write a file that does not parse
        return candidate

    return _Document(lambda source: lint_source(source, path, config, fix_edits=True), apply)


def _program_document(path: str, config: Config) -> _Document:
    def apply(program: Program, edits: list[Edit]) -> Program:
        candidate = program.with_edits(edits)  # edits that leave their cell raise
        parse(candidate.text)
        return candidate

    return _Document(lambda program: lint_program(program, path, config), apply)


def _fix_loop(document: _Document, state, diagnostics: list[Diagnostic], unsafe: bool,
              until: Callable[[list[Diagnostic]], bool] | None = None):
    """Apply fixes in rounds; returns (state, applied, diagnostics of the final state).

    Each fix was checked alone by the engine; a round that applies several is checked as a whole:
    the result must have exactly the findings it had less the fixed ones (two rewrites can undo
    each other). A round that breaks that applies only its first fix. `until(applied)`: stop after
    the round that makes it true."""
    applied: list[Diagnostic] = []
    for _ in range(MAX_ROUNDS):
        if until is not None and until(applied):
            break
        chosen, edits = choose(diagnostics, unsafe)
        if not chosen:
            break
        step = _round(document, state, diagnostics, chosen, edits)
        if step is None and len(chosen) > 1:
            chosen = chosen[:1]
            step = _round(document, state, diagnostics, chosen, list(chosen[0].fix.edits))
        if step is None:
            break
        state, diagnostics, fixed = step
        applied.extend(fixed)
    return state, applied, diagnostics


def _round(document: _Document, state, diagnostics, chosen, edits):
    """(new state, its diagnostics, the findings fixed) if applying `edits` removes exactly the
    chosen findings, and those whose fix is the same rewrite as a chosen one."""
    try:
        candidate = document.apply(state, edits)
    except (SourceError, CellBoundaryError):
        return None
    if getattr(candidate, "text", candidate) == getattr(state, "text", state):
        return None
    fixed = _fixed_by(diagnostics, chosen)
    after = document.lint(candidate)
    expected = Counter(finding_key(d) for d in diagnostics) - Counter(finding_key(d) for d in fixed)
    if Counter(finding_key(d) for d in after) != expected:
        return None
    return candidate, after, fixed


def _fixed_by(diagnostics: list[Diagnostic], chosen: list[Diagnostic]) -> list[Diagnostic]:
    """The findings a round fixes: the chosen ones, those whose fix is the same rewrite, and those
    the engine found fixed with a chosen rewrite (`Fix.also_fixes`), marked as such."""
    rewrites = {d.fix.edits for d in chosen}
    along = Counter(key for d in chosen for key in d.fix.also_fixes)
    fixed = []
    for diagnostic in diagnostics:
        if any(diagnostic is c for c in chosen) or (diagnostic.fix is not None and diagnostic.fix.edits in rewrites):
            fixed.append(diagnostic)
        elif along[finding_key(diagnostic)] > 0:
            along[finding_key(diagnostic)] -= 1
            by = next(c for c in chosen if finding_key(diagnostic) in c.fix.also_fixes)
            fixed.append(replace(diagnostic, fix=Fix(f"comes with the {by.code} fix on line {by.line}",
                                                     by.fix.applicability, ())))
    return fixed


def plan(document: _Document, state, diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """`diagnostics` (of `state`) with the fixes the fix loop would apply, and only those: what
    `check` lists is what `--fix` (safe fixes) and `--fix --unsafe-fixes` do, including fixes that
    become possible only after another fix; a listed fix the loop would not apply is withdrawn with
    the reason."""
    if not any(d.fix for d in diagnostics):
        return diagnostics
    _, safe, final = _fix_loop(document, state, diagnostics, unsafe=False)
    everything = safe
    if any(d.fix and d.fix.applicability is Applicability.UNSAFE for d in diagnostics) or any(d.fix for d in final):
        _, everything, final = _fix_loop(document, state, diagnostics, unsafe=True)
    safe_keys = Counter(finding_key(d) for d in safe)
    all_keys = Counter(finding_key(d) for d in everything)
    by_key = {}
    for d in everything:
        by_key.setdefault(finding_key(d), []).append(d)
    refusals = {finding_key(d): d.manual_edit for d in final if d.fix is None and d.manual_edit is not None}
    planned = []
    for diagnostic in diagnostics:
        key = finding_key(diagnostic)
        fix = None
        if all_keys[key] > 0:
            all_keys[key] -= 1
            applied = by_key[key].pop(0)
            fix = diagnostic.fix if diagnostic.fix is not None and diagnostic.fix.title == applied.fix.title else \
                Fix(applied.fix.title, applied.fix.applicability, None)  # possible only after another fix
            if fix.applicability is Applicability.SAFE:
                if safe_keys[key] > 0:
                    safe_keys[key] -= 1
                else:  # a safe fix that applies only after an unsafe one
                    fix = Fix(fix.title, Applicability.UNSAFE, fix.edits)
        planned.append(_with_fix(diagnostic, fix, refusals.get(key)))
    return planned


def _with_fix(diagnostic: Diagnostic, fix: Fix | None, refusal: str | None) -> Diagnostic:
    if fix is not None:
        return replace(diagnostic, fix=fix, manual_edit=None)
    if diagnostic.fix is None:
        return diagnostic
    return replace(diagnostic, fix=None,
                   manual_edit=refusal if refusal is not None else "another fix rewrites this code first")


def plan_source(source: str, path: str = "<string>", config: Config = DEFAULT_CONFIG,
                diagnostics: list[Diagnostic] | None = None) -> list[Diagnostic]:
    """What `check` lists for a module: its findings, each with the fix `--fix` would apply.
    `diagnostics`: the module's findings with fix edits, when the caller has them already."""
    document = _module_document(path, config)
    return plan(document, source, document.lint(source) if diagnostics is None else diagnostics)


def plan_program(program: Program, path: str, config: Config = DEFAULT_CONFIG,
                 per_cell: bool = True) -> list[Diagnostic]:
    """The same for a notebook's program, positioned per cell (or in the program, `per_cell=False`)."""
    document = _program_document(path, config)
    planned = plan(document, program, document.lint(program))
    return [program.to_cells(d) for d in planned] if per_cell else planned


def fix_through(state: str | Program, path: str, config: Config, target: int, unsafe: bool):
    """The fix loop on a module's text (or a notebook's program) run until it fixes the finding at
    index `target` of what `plan_source` (`plan_program`) lists for it: (the text or program then,
    the other findings fixed on the way), or None if the loop does not fix it. The edit for a fix
    that `check` lists but that applies only after another fix."""
    document = _program_document(path, config) if isinstance(state, Program) else _module_document(path, config)
    diagnostics = document.lint(state)
    key = finding_key(diagnostics[target])
    # `plan` gives the n-th finding with a key the n-th fix applied with that key: the same here.
    wanted = sum(1 for d in diagnostics[:target] if finding_key(d) == key) + 1

    def done(applied: list[Diagnostic]) -> bool:
        return sum(1 for d in applied if finding_key(d) == key) >= wanted

    state, applied, _ = _fix_loop(document, state, diagnostics, unsafe, until=done)
    if not done(applied):
        return None
    others, seen = [], 0
    for diagnostic in applied:
        seen += finding_key(diagnostic) == key
        if not (finding_key(diagnostic) == key and seen == wanted):
            others.append(diagnostic)
    return state, others


def fix_source(source: str, path: str = "<string>", config: Config = DEFAULT_CONFIG,
               unsafe: bool = False) -> FixOutcome:
    document = _module_document(path, config)
    outcome = FixOutcome(source)
    outcome.source, outcome.applied, final = _fix_loop(document, source, document.lint(source), unsafe)
    outcome.remaining = plan(document, outcome.source, final)
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
    document = _program_document(path, config)
    program, applied, final = _fix_loop(document, program, document.lint(program), unsafe)
    return program, applied, plan(document, program, final)


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
    import tempfile  # here: a check (each worker that lints imports this module) writes nothing

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
