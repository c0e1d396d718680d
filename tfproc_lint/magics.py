"""IPython syntax in a notebook cell, masked so that the cell parses as Python.

Every line keeps its number, and every line that is not masked keeps its text (so columns hold).
Masked: line magics (`%pip install x`), shell escapes (`!ls`, `files = !ls`), help (`?obj`,
`obj??`), IPython's other escapes (`/f x`, `;f x`, `,f x`) and cell magics (`%%bash`: the whole
cell). A cell magic whose body is Python run in the kernel (`%%time`, `%%capture`, ...) masks only
its first line, and `%time stmt` keeps the statement: both run the code in the notebook's process.
A line is a candidate only where a statement can start: not inside brackets, a string or after a
backslash, so `x = (a\\n != b)` and `%` formatting on continuation lines stay Python.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tfproc_lint.source import split_lines

# Cell magics whose body is Python executed in the kernel's namespace.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug", "memit"})
# Line magics that run the rest of the line as a statement in the kernel.
PYTHON_LINE_MAGICS = frozenset({"time", "timeit", "prun"})
ESCAPES = ("%", "!", "?", "/", ";", ",")
_ASSIGNED = re.compile(r"(?P<target>[A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*\s*=)\s*[%!]")
_LINE_MAGIC = re.compile(r"%(?P<name>\w+)\s+(?P<rest>[^-\s].*)")


@dataclass(frozen=True)
class Mask:
    line: int  # 0-based line of the cell
    original: str  # the line as written, without its line end


@dataclass(frozen=True)
class MaskedCell:
    text: str
    masks: tuple[Mask, ...]


def mask_cell(source: str) -> MaskedCell:
    lines = split_lines(source)
    bodies = [_without_end(line) for line in lines]
    first = next((i for i, body in enumerate(bodies) if body.strip()), None)
    if first is not None and bodies[first].lstrip().startswith("%%"):
        name = bodies[first].lstrip()[2:].split(maxsplit=1)[0] if bodies[first].strip() != "%%" else ""
        if name not in PYTHON_CELL_MAGICS:  # not Python: the whole cell goes
            masks = tuple(Mask(i, body) for i, body in enumerate(bodies) if body.strip())
            return MaskedCell(_replace(lines, {m.line: "" for m in masks}), masks)
    replaced: dict[int, str] = {}
    scanner = _Scanner()
    continuing_magic = None  # the indentation of a magic whose line ended in a backslash
    for i, body in enumerate(bodies):
        if continuing_magic is not None:
            replaced[i] = ""
            continuing_magic = continuing_magic if body.endswith("\\") else None
            continue
        if scanner.at_statement_start():
            placeholder = _placeholder(body, scanner.code_end(body))
            if placeholder is not None:
                replaced[i] = placeholder
                if body.endswith("\\"):
                    continuing_magic = body
                continue
        scanner.feed(body)
    masks = tuple(Mask(i, bodies[i]) for i in sorted(replaced))
    return MaskedCell(_replace(lines, replaced), masks)


def _placeholder(body: str, code_end: int) -> str | None:
    """Python with the same indentation for an IPython line, or None for a Python line."""
    stripped = body.lstrip()
    indent = body[: len(body) - len(stripped)]
    code = body[:code_end].rstrip()
    if not stripped or stripped.startswith("#"):
        return None
    if stripped.startswith(ESCAPES):
        magic = _LINE_MAGIC.fullmatch(stripped)
        if magic and magic["name"] in PYTHON_LINE_MAGICS and not body.endswith("\\"):
            # `%time f(x)` -> `0;    f(x)`: the statement stays, at the same columns.
            keep = indent + "0;" + " " * (len(stripped) - len(magic["rest"]) - 2) + magic["rest"]
            if _compiles(keep.strip()):
                return keep
        return indent + "pass"
    if code.endswith("?"):  # obj? / obj??
        return indent + "pass"
    assigned = _ASSIGNED.match(stripped)
    if assigned:  # files = !ls / out = %sx ls
        return indent + assigned["target"] + " None"
    return None


def _compiles(code: str) -> bool:
    try:
        compile(code, "<cell>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def _without_end(line: str) -> str:
    return line.rstrip("\r\n")


def _replace(lines: list[str], replaced: dict[int, str]) -> str:
    return "".join(
        replaced[i] + line[len(_without_end(line)):] if i in replaced else line for i, line in enumerate(lines)
    )


class _Scanner:
    """Just enough of Python's tokenizer to know where a statement can start: open brackets,
    open strings, backslash continuations."""

    def __init__(self) -> None:
        self.depth = 0
        self.string: str | None = None  # the open string's quote
        self.continued = False

    def at_statement_start(self) -> bool:
        return self.depth == 0 and self.string is None and not self.continued

    def code_end(self, body: str) -> int:
        """Where the comment starts on a line that starts a statement (or the line's end)."""
        probe = _Scanner()
        return probe.feed(body)

    def feed(self, body: str) -> int:
        i, comment = 0, len(body)
        while i < len(body):
            char = body[i]
            if self.string is not None:
                if char == "\\":
                    i += 2
                elif body.startswith(self.string, i):
                    i += len(self.string)
                    self.string = None
                else:
                    i += 1
                continue
            if char == "#":
                comment = i
                break
            if char in "([{":
                self.depth += 1
            elif char in ")]}":
                self.depth = max(0, self.depth - 1)
            elif char in "\"'":
                self.string = body[i:i + 3] if body[i:i + 3] in ('"""', "'''") else char
                i += len(self.string)
                continue
            i += 1
        ends_in_backslash = comment == len(body) and body.endswith("\\")
        if self.string is not None and len(self.string) == 1 and not ends_in_backslash:
            self.string = None  # an unterminated one-line string: a syntax error, not our business
        self.continued = ends_in_backslash and self.string is None
        return comment
