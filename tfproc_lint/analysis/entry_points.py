"""The start method a project's entry points set, read from their text (no parse): a module that
such a script imports runs under it (the project layer, tfproc_lint/project.py, finds the scripts
and what each imports; `ModuleFacts.file_start_method` asks)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from tfproc_lint.config import display_path
from tfproc_lint.records import record

_SET_START_METHOD = re.compile(r"set_start_method\(\s*(?:method\s*=\s*)?(['\"])(\w+)\1")
_METHODS = frozenset({"fork", "spawn", "forkserver"})


@record
class EntryPoint:
    """A script (an `if __name__ == "__main__":` block) that calls `set_start_method`."""

    path: Path
    method: str  # the one literal method it sets, else "unknown"
    line: int  # the first line that names set_start_method


def entry_point(path: Path, text: str) -> EntryPoint | None:
    """The file at `path` (its `text`) as an entry point that sets a start method, or None."""
    if "set_start_method" not in text or "__main__" not in text:
        return None
    literals = {match.group(2) for match in _SET_START_METHOD.finditer(text)}
    line = text.count("\n", 0, text.find("set_start_method")) + 1
    method = literals.pop() if len(literals) == 1 and literals <= _METHODS else "unknown"
    return EntryPoint(path, method, line)


def agreed_start_method(entries: Iterable[EntryPoint]) -> tuple[str, str] | None:
    """(method, why) when these entry points (those that import a module) all set the same start
    method: it holds when the module runs. None when there are none; "unknown" when they disagree."""
    methods: dict[str, EntryPoint] = {}
    for entry in entries:
        methods.setdefault(entry.method, entry)
    if not methods:
        return None
    if len(methods) > 1 or "unknown" in methods:
        return "unknown", "the entry points that import this module set different start methods"
    method, entry = next(iter(methods.items()))
    return method, (f'set_start_method("{method}") in {display_path(entry.path)}:{entry.line}, '
                    "an entry point that imports it")
