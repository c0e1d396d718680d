"""Jupyter notebooks as one Python program: the code cells in order, IPython syntax masked.

Positions are reported per cell: `cell` is the cell's 1-based number among all the notebook's
cells (markdown and raw cells count, as in Ruff: `notebook.ipynb:cell 3:2:5`), `line` the 1-based
line within that cell. Edits are applied cell by cell; an edit that would cross a cell boundary or
touch a masked IPython line is refused. Files are read and written with nbformat (the `notebook`
extra), imported only when a notebook is met; nothing here imports LibCST.
"""

from __future__ import annotations

import bisect
import copy
import json
import re
import warnings
from dataclasses import dataclass, replace

from tfproc_lint.diagnostics import Diagnostic, Edit, Fix, Related
from tfproc_lint.magics import Mask, mask_cell
from tfproc_lint.source import SourceError, split_lines

CROSSES_CELLS = "the rewrite would span notebook cells"
# Messages that name another line of the file ("(line 27: loads a Keras model)") name its cell too.
_LINE_IN_MESSAGE = re.compile(r"\(line (?P<line>\d+)(?=[:)])")


class CellBoundaryError(ValueError):
    """An edit that crosses from one cell into another, or rewrites a masked IPython line."""


@dataclass(frozen=True)
class Cell:
    number: int  # 1-based among all cells
    text: str  # masked; ends with a newline unless empty
    masks: tuple[Mask, ...]
    newline_added: bool  # the source did not end with a newline; the program's text adds one


@dataclass(frozen=True)
class Program:
    """The notebook's code cells joined into one module, with the way back to each cell."""

    cells: tuple[Cell, ...]

    @property
    def text(self) -> str:
        return "".join(cell.text for cell in self.cells)

    @property
    def _starts(self) -> tuple[list[int], list[int]]:
        offsets, lines = [0], [1]
        for cell in self.cells:
            offsets.append(offsets[-1] + len(cell.text))
            lines.append(lines[-1] + cell.text.count("\n"))
        return offsets, lines

    def locate(self, line: int) -> tuple[int, int]:
        """(cell number, line in the cell) of a 1-based line of the program."""
        _, lines = self._starts
        index = min(max(bisect.bisect_right(lines, line) - 1, 0), len(self.cells) - 1)
        while index > 0 and not self.cells[index].text:  # an empty cell holds no line
            index -= 1
        return self.cells[index].number, line - lines[index] + 1

    def sources(self) -> dict[int, str]:
        """Each code cell's source as it will be written back: IPython lines restored."""
        return {cell.number: _restore(cell) for cell in self.cells}

    def fits(self, edits) -> bool:
        try:
            self.with_edits(edits)
        except CellBoundaryError:
            return False
        return True

    def with_edits(self, edits) -> Program:
        """The program after `edits` (offsets into `text`), applied within their cells."""
        grouped = self._by_cell(edits)
        cells = list(self.cells)
        for index, local in grouped.items():
            cells[index] = _edit_cell(cells[index], local)
        return Program(tuple(cells))

    def _by_cell(self, edits) -> dict[int, list[Edit]]:
        offsets, _ = self._starts
        grouped: dict[int, list[Edit]] = {}
        for edit in edits:
            index = self._cell_of(edit, offsets)
            start = offsets[index]
            local = Edit(edit.start - start, edit.end - start, edit.content)
            for mask_start, mask_end in _mask_spans(self.cells[index]):
                if local.start < mask_end and mask_start < local.end or mask_start < local.start < mask_end:
                    raise CellBoundaryError("the edit rewrites an IPython line")
            grouped.setdefault(index, []).append(local)
        return grouped

    def _cell_of(self, edit: Edit, offsets: list[int]) -> int:
        """The cell an edit starts in; an insertion at a boundary goes to the cell that follows,
        one after the last line to the last cell with text."""
        for index, cell in enumerate(self.cells):
            start, end = offsets[index], offsets[index + 1]
            after_the_end = edit.start == end == offsets[-1]
            if cell.text and (start <= edit.start < end or after_the_end):
                if edit.end > end:
                    raise CellBoundaryError("the edit crosses a cell boundary")
                return index
        raise CellBoundaryError("the edit is outside every code cell")

    # diagnostics -------------------------------------------------------------------------------------
    def refuse_crossing_fix(self, diagnostic: Diagnostic) -> Diagnostic:
        """The finding without its fix when the fix's edits cannot be applied cell by cell."""
        fix = diagnostic.fix
        if fix is None or fix.edits is None or self.fits(fix.edits):
            return diagnostic
        return replace(diagnostic, fix=None, manual_edit=CROSSES_CELLS)

    def to_cells(self, diagnostic: Diagnostic) -> Diagnostic:
        """Positions per cell. Fix edits are dropped (their offsets are into the joined program,
        which no one can open); the fix's title and safety stay, `--diff` and `--fix` apply it."""
        cell, line = self.locate(diagnostic.line)
        end_line = diagnostic.end_line
        if end_line is not None:
            end_cell, end_line = self.locate(end_line)
            if end_cell != cell:
                end_line = None
        related = tuple(self._related(r) for r in diagnostic.related)
        fix = diagnostic.fix and Fix(diagnostic.fix.title, diagnostic.fix.applicability, None)
        message, manual_edit = (None if text is None else _LINE_IN_MESSAGE.sub(
            lambda m: self._cell_line(int(m["line"])), text) for text in (diagnostic.message, diagnostic.manual_edit))
        changes = dict(line=line, end_line=end_line, cell=cell, related=related, fix=fix, message=message,
                       manual_edit=manual_edit)
        if end_line is None:
            changes["end_col"] = None
        return replace(diagnostic, **changes)

    def _cell_line(self, line: int) -> str:
        cell, line = self.locate(line)
        return f"(cell {cell}, line {line}"

    def _related(self, related: Related) -> Related:
        cell, line = self.locate(related.line)
        end_cell, end_line = self.locate(related.end_line)
        if end_cell != cell:
            end_line = line
        return replace(related, line=line, end_line=end_line, cell=cell)


def _mask_spans(cell: Cell) -> list[tuple[int, int]]:
    starts = [0]
    for line in split_lines(cell.text):
        starts.append(starts[-1] + len(line))
    return [(starts[mask.line], starts[mask.line + 1]) for mask in cell.masks]


def _edit_cell(cell: Cell, edits: list[Edit]) -> Cell:
    text = cell.text
    spans = _mask_spans(cell)
    for edit in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
        text = text[: edit.start] + edit.content + text[edit.end:]
        shift = len(edit.content) - (edit.end - edit.start)
        spans = [(s + shift, e + shift) if s >= edit.end else (s, e) for s, e in spans]
    if text and not text.endswith("\n"):
        text += "\n"
    masks = []
    for (start, _end), mask in zip(spans, cell.masks):
        if start and text[start - 1] != "\n":
            raise CellBoundaryError("an edit joined an IPython line to another line")
        masks.append(Mask(text.count("\n", 0, start), mask.original))
    return replace(cell, text=text, masks=tuple(masks))


def _restore(cell: Cell) -> str:
    lines = split_lines(cell.text)
    for mask in cell.masks:
        lines += [""] * (mask.line + 1 - len(lines))  # a masked last line without a line end leaves no line
        ending = lines[mask.line][len(lines[mask.line].rstrip("\r\n")):]
        lines[mask.line] = mask.original + ending
    text = "".join(lines)
    if cell.newline_added and text.endswith("\n"):
        text = text[:-1]
    return text


def program_of(cells: list[tuple[int, str]]) -> Program:
    """The program of (cell number, source) code cells."""
    built = []
    for number, source in cells:
        masked = mask_cell(source)
        text = masked.text
        added = bool(text) and not text.endswith("\n")
        built.append(Cell(number, text + "\n" if added else text, masked.masks, added))
    return Program(tuple(built))


# reading and writing ---------------------------------------------------------------------------------
@dataclass
class Notebook:
    node: object  # nbformat's NotebookNode
    raw: str  # the file's text (without a BOM)
    bom: bool
    program: Program | None  # None: not a Python notebook (nothing to check)


# The `notebook` extra's requirement (setup.cfg); tfproc-lint has no release to name instead.
NBFORMAT_INSTALL = "pip install 'nbformat>=5.7' (tfproc-lint's `notebook` extra)"


def _nbformat():
    try:
        import nbformat
    except ImportError:
        raise SourceError(f"checking notebooks needs nbformat: {NBFORMAT_INSTALL}") from None
    return nbformat


def read_notebook(data: bytes) -> Notebook:
    """Parse a notebook; SourceError (one line) when it is not valid JSON or not a notebook."""
    nbformat = _nbformat()
    bom = data.startswith(b"\xef\xbb\xbf")
    try:
        raw = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise SourceError(f"not a notebook: cannot decode as UTF-8 ({error.reason})") from None
    try:
        json.loads(raw)
    except ValueError as error:
        raise SourceError(f"not a notebook: invalid JSON ({error})") from None
    try:
        node = nbformat.reader.reads(raw)  # parses and joins line lists, without logging on a bad schema
    except Exception as error:  # noqa: BLE001 - nbformat raises many kinds; one line says why
        raise SourceError(f"not a notebook: {_first_line(error)}") from None
    if node.get("nbformat") != 4 or not isinstance(node.get("cells"), list):
        raise SourceError(f"not a notebook in format 4 (found format {node.get('nbformat')!r}); "
                          "convert it with `jupyter nbconvert --to notebook`")
    cells = []
    for number, cell in enumerate(node["cells"], start=1):
        if not isinstance(cell, dict) or not isinstance(cell.get("source", ""), str):
            raise SourceError(f"not a notebook: cell {number} has no source text")
        if cell.get("cell_type") == "code":
            cells.append((number, cell.get("source", "")))
    return Notebook(node, raw, bom, program_of(cells) if _is_python(node) else None)


def _is_python(node) -> bool:
    metadata = node.get("metadata") or {}
    language = (metadata.get("language_info") or {}).get("name") or (metadata.get("kernelspec") or {}).get("language")
    return not language or str(language).lower() in ("python", "python3", "ipython")


def _first_line(error: Exception) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def write_notebook(notebook: Notebook, sources: dict[int, str]) -> bytes:
    """The notebook's bytes with these cells' sources; every other byte as it was. Raises
    SourceError when the result does not validate, or when the file's JSON layout cannot be
    reproduced (the file is then left alone)."""
    nbformat = _nbformat()
    changed = {number: text for number, text in sources.items()
               if notebook.node["cells"][number - 1].get("source") != text}
    if not changed:
        return _encode(notebook.raw, notebook.bom)
    text = _layout(notebook)(changed)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            nbformat.validate(nbformat.reader.reads(text))
    except nbformat.ValidationError as error:
        raise SourceError(f"not written: the fixed notebook does not validate ({_first_line(error)})") from None
    return _encode(text, notebook.bom)


def _encode(text: str, bom: bool) -> bytes:
    return (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8")


def _layout(notebook: Notebook):
    """A function from {cell number: new source} to the file's new text, laid out like the file:
    nbformat's own writer when it reproduces the file byte for byte (Jupyter, VS Code), else
    `json.dumps` of the file's own data with its indentation, key order and the cell's source shape
    (a string or a list of lines: Colab's layout), else none."""
    nbformat = _nbformat()
    raw = notebook.raw
    newline = "\r\n" if "\r\n" in raw else "\n"
    final = newline if raw.endswith(newline) else ""

    def finish(text: str) -> str:
        return text.replace("\n", newline) + final

    def canonical(changed: dict[int, str]) -> str:
        node = copy.deepcopy(notebook.node)
        for number, source in changed.items():
            node["cells"][number - 1]["source"] = source
        return finish(nbformat.v4.writes(node))  # Jupyter's layout, without nbformat.writes' logging

    if canonical({}) == raw:
        return canonical
    layouts = [(indent, None) for indent in (1, 2, 4, "\t", 0, 3)] + [(None, (", ", ": ")), (None, (",", ":"))]
    for indent, separators in layouts:
        for ensure_ascii in (False, True):
            def dump(changed: dict[int, str], indent=indent, separators=separators, ensure_ascii=ensure_ascii) -> str:
                data = json.loads(raw)
                for number, source in changed.items():
                    cell = data["cells"][number - 1]
                    cell["source"] = source.splitlines(keepends=True) if isinstance(cell["source"], list) else source
                return finish(json.dumps(data, indent=indent, ensure_ascii=ensure_ascii, separators=separators))
            if dump({}) == raw:
                return dump
    raise SourceError("not written: cannot reproduce this notebook's JSON layout, so a fix would reformat "
                      "the whole file; apply the fix by hand")
