"""Which of a project's files import given files: the one search behind TFP202's "this module is
imported by" (`Project.importers`, direct importers with the line) and `check --with-dependents`
(tfproc_lint/dependents.py, importers through chains of modules).

A file's imports (`import_lines`) are resolved with the file's `Layout` as the analysis resolves
them; importing `a.b.c` also runs the packages `a` and `a.b`, so their `__init__.py` count. They
are read in one of two ways (`Reading`): `EXACT` parses the file with CPython's `ast` (every
import statement, multi-line ones included; a file that does not parse imports nothing), for a
finding's message; `TEXT` reads each line that says "import" with `project_layout.imported_names`
(a line that starts with an import inside a string counts; a `from` import whose parenthesis
opens a line break, or a second statement on a line, is missed), about 15 times cheaper, for a
search of the whole project (on a copy of Keras' 904 files, every one a dependent of
`keras/__init__.py`: 0.3 s of CPU against 4.5 s with `ast`). Only files whose text can name one
of the files searched for are read for their imports (the module's last name, or a relative
import when it is a package), each once per search. Nothing here reads the disk: the caller gives
the texts.
"""

from __future__ import annotations

import ast
import enum
import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from tfproc_lint.project_layout import Layout, absolute_module, imported_names

_RELATIVE_IMPORT = re.compile(r"from\s+\.")
PathLike = TypeVar("PathLike", str, Path)  # absolute paths, as the caller holds them
MAX_NAMES_TESTED = 4  # beyond this many modules searched for at once, every candidate is read


class Reading(enum.Enum):
    EXACT = "exact"  # CPython's ast
    TEXT = "text"  # the import lines' text


def import_lines(text: str, path: Path | str, layout: Layout, reading: Reading = Reading.EXACT,
                 resolved: dict | None = None) -> dict[str, int]:
    """The project files (absolute paths) that the import statements of `text` (the file at `path`)
    run, each with the line of the first statement that runs it (0 under `Reading.TEXT`: not
    told). `resolved`: a dict kept between calls, where names already resolved from the same
    folder are looked up."""
    package = layout.package_of(path)
    found: dict[str, int] = {}
    known = {} if resolved is None else resolved.setdefault(layout, {})
    folder = os.path.dirname(os.path.abspath(path))
    statements = _parsed_imports(text, package) if reading is Reading.EXACT else _text_imports(text, package)
    for line, names in sorted(statements) if len(statements) > 1 else statements:  # the first line first
        for name in names:
            parts = name.split(".")
            for cut in range(1, len(parts) + 1):
                key = (".".join(parts[:cut]), folder)
                target = known.get(key, False)
                if target is False:
                    module_file = layout.module_path(key[0], path)
                    target = known[key] = os.path.abspath(module_file) if module_file is not None else None
                if target is not None and target not in found:
                    found[target] = line
    return found


def _text_imports(text: str, package: str | None) -> list[tuple[int, list[str]]]:
    """[(0, the absolute names its import lines import)]: lines are not told (0), and the lines
    that say "import" are read as one text (a third of the cost of reading each)."""
    names = imported_names("\n".join(line for line in text.split("\n") if "import" in line), package)
    return [(0, names)] if names else []


def _parsed_imports(text: str, package: str | None) -> list[tuple[int, list[str]]]:
    """(line, the absolute names an import statement names) for each import statement."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.append((node.lineno, [alias.name for alias in node.names]))
        elif isinstance(node, ast.ImportFrom):
            module = absolute_module(node.level, node.module or "", package)
            if module:
                found.append((node.lineno, [module, *(f"{module}.{alias.name}" for alias in node.names)]))
    return found


def find_importers(targets: Iterable[PathLike], files: Iterable[PathLike], text_of: Callable[[PathLike], str | None],
                   layout_of: Callable[[PathLike], Layout | None], reading: Reading = Reading.EXACT,
                   transitive: bool = False) -> dict[PathLike, int]:
    """The files among `files` (absolute paths) that import one of `targets` (absolute paths of
    module files), each with the line of its first import statement that runs one (`transitive`:
    or that imports such a file, through any chain; the line is then its first import of the
    chain's next file). A target is among them only where it imports another. `text_of(file)`:
    its text, None if unreadable (then it imports nothing); `layout_of(file)`: the layout its
    imports resolve with, None: outside any project."""
    paths = {str(file): file for file in files}  # paths as text: cheaper to hash and compare
    texts: dict[str, str | None] = {}
    edges: dict[str, dict[str, int]] = {}  # the files read for their imports -> what they import
    resolved: dict = {}
    found: dict[str, int] = {}
    frontier = {str(target) for target in targets}
    while frontier:
        names = {_last_name(target) for target in frontier}
        relative = any(os.path.basename(target) == "__init__.py" for target in frontier)
        for file, path in paths.items():
            if file in edges:
                continue
            if file not in texts:
                texts[file] = text_of(path)
            text = texts[file]
            if text is None or "import" not in text:
                continue
            if len(names) <= MAX_NAMES_TESTED and not any(name in text for name in names) \
                    and not (relative and _RELATIVE_IMPORT.search(text)):
                continue
            layout = layout_of(path)
            edges[file] = import_lines(text, path, layout, reading, resolved) if layout is not None else {}
        reached = set()
        for file, imported in edges.items():
            lines = [line for target, line in imported.items() if target in frontier and target != file]
            if lines and file not in found:
                found[file] = min(lines)
                reached.add(file)
        frontier = reached if transitive else set()
    return {paths[file]: line for file, line in found.items()}


def _last_name(path: str) -> str:
    """The last part of the module name of the file at `path` (a package's for `__init__.py`)."""
    folder, name = os.path.split(path)
    return os.path.basename(folder) if name == "__init__.py" else name.rpartition(".")[0]
