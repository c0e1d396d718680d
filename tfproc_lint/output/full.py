"""`--output-format full`: each finding with its source lines, a `^^^^` marker under it, and each
related place (where the runtime started, where the worker is defined) with its own snippet and
label, in the layout of Ruff's full output. Lines come from the text the run carries (after
`--fix`), else from the file on disk; a notebook's from its cell. A finding whose lines cannot be
read is printed without a snippet.
"""

from __future__ import annotations

from pathlib import Path

from tfproc_lint.output import Run
from tfproc_lint.output.text import diagnostic_line, summary

CONTEXT = 1  # lines shown above and below the marked ones
MAX_MARKED = 4  # lines of a long span shown before "..."
TAB = 4


def render(run: Run, colour=None) -> str:
    paint = colour or (lambda text, _style: text)
    sources = _Sources(run)
    blocks = []
    for diagnostic in run.diagnostics:
        places = [(diagnostic, diagnostic.code, None)]
        places += [(related, related.message, related.path or diagnostic.path) for related in diagnostic.related]
        numbers = [p.end_line or p.line for p, _, _ in places]
        width = len(str(max(numbers) + CONTEXT))
        lines = [diagnostic_line(diagnostic, colour)]
        for place, label, related_path in places:
            text = sources.lines(related_path or diagnostic.path, place.cell)
            if related_path is not None:
                where = f"cell {place.cell}:" if place.cell is not None else ""
                lines.append(f"{' ' * width} {paint(':::', 'dim')} {related_path}:{where}{place.line}:{place.col + 1}")
            if text is None:
                continue
            lines.extend(snippet(text, place, label, width, paint))
        blocks.append("\n".join(lines))
    blocks.append(summary(run))
    return "\n\n".join(blocks) + "\n"


def snippet(text: list[str], place, label: str, width: int, paint) -> list[str]:
    """The gutter-framed lines around `place` (1-based line, 0-based col, optional ends)."""
    first = place.line
    last = place.end_line if place.end_line and place.end_line >= first else first
    shown_last = min(last, first + MAX_MARKED - 1)
    if first > len(text):
        return []
    gutter = paint(" " * width + " |", "dim")
    out = [gutter]
    for number in range(max(1, first - CONTEXT), min(len(text), shown_last + CONTEXT) + 1):
        line = text[number - 1].rstrip("\r\n")
        out.append(f"{paint(str(number).rjust(width) + ' |', 'dim')} {line.expandtabs(TAB)}".rstrip())
        if number == first:
            end = place.end_col if last == first and place.end_col is not None else len(line)
            start = len(line[: place.col].expandtabs(TAB))
            marks = max(1, len(line[:end].expandtabs(TAB)) - start)
            out.append(f"{gutter} {' ' * start}{paint('^' * marks, 'red')} {label}")
        if number == shown_last and shown_last < last:
            out.append(f"{paint(' ' * width + ' |', 'dim')} ...")
    out.append(gutter)
    return out


class _Sources:
    """Lines of each file (and notebook cell) a finding points into, read once."""

    def __init__(self, run: Run) -> None:
        self._carried = run.sources
        self._cache: dict[tuple[str, int | None], list[str] | None] = {}

    def lines(self, path: str, cell: int | None) -> list[str] | None:
        key = (path, cell)
        if key not in self._cache:
            self._cache[key] = self._read(path, cell)
        return self._cache[key]

    def _read(self, path: str, cell: int | None) -> list[str] | None:
        from tfproc_lint.source import SourceError, read_source, split_lines

        try:
            if cell is not None:
                from tfproc_lint.notebook import read_notebook

                node = read_notebook(Path(path).read_bytes()).node
                return [line.rstrip("\r\n") for line in split_lines(node["cells"][cell - 1]["source"])]
            text = self._carried.get(path)
            text = text if text is not None else read_source(Path(path)).text
            return [line.rstrip("\r\n") for line in split_lines(text)]
        except (OSError, SourceError, IndexError, KeyError):
            return None
