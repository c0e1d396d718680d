"""The files of a project that import given files, directly or through a chain of the project's
modules: what `tfproc-lint check --with-dependents` checks besides the files it is given (the
pre-commit hook: a staged module that now loads a model at import makes the script that imports it
fork after TensorFlow started, though the script itself is not staged), and what the editor server
lints again when a module changes.

The importers are found by the search TFP202 uses too (`analysis/importers.py`: each file's imports
resolved with the file's own `Layout`, as the analysis resolves them), with its imports read from
its text (`Reading.TEXT`: the lines that start with an import, those in strings too): nothing is
parsed or linted, one read per file of the project at most (the costs are in
docs/integrations.md). A notebook's imports are read from its code cells.

What importing a file runs, for the editor server (`import_closure`), is read from the text the
way the project layer's pre-filter reads it (`project_layout.imported_names`: plain and `from`
imports, relative ones too, an over-approximation that counts commented or quoted imports).
"""

from __future__ import annotations

import os
from pathlib import Path

from tfproc_lint.analysis.importers import Reading, find_importers
from tfproc_lint.config import Config, Configs
from tfproc_lint.files import SourceFile, collect_files, is_notebook
from tfproc_lint.project_layout import Layout, buffer_text, imported_names, layout_for, read_source


def module_imports(text: str, path: Path | str, layout: Layout, resolved: dict | None = None) -> set[str]:
    """The project files (absolute paths) that importing the file at `path` (its `text`) runs:
    each module it imports and the packages above it. `resolved`: a dict kept between calls, where
    names already resolved from the same folder are looked up."""
    return _resolve(_imported(text, layout.package_of(path)), path, layout, {} if resolved is None else resolved)


def _imported(text: str, package: str | None) -> list[str]:
    # Each import the regular expression reads lies on one line that says "import": the other
    # lines are left out first (a third of the cost on a package's sources).
    return imported_names("\n".join(line for line in text.split("\n") if "import" in line), package)


def _resolve(names: list[str], path: Path | str, layout: Layout, resolved: dict) -> set[str]:
    folder = os.path.dirname(os.path.abspath(path))
    known = resolved.setdefault(layout, {})  # (module, importer's folder) -> file or None
    found: set[str] = set()
    for name in names:
        parts = name.split(".")
        for cut in range(1, len(parts) + 1):
            module = ".".join(parts[:cut])
            target = known.get((module, folder), False)
            if target is False:
                found_path = layout.module_path(module, path)
                target = known[(module, folder)] = os.path.abspath(found_path) if found_path is not None else None
            if target is not None:
                found.add(target)
    return found


def notebook_code(data: bytes) -> str:
    """A notebook's code cells, joined (their imports are what matters here); "" if unreadable."""
    import json

    try:
        cells = json.loads(data).get("cells", [])
        sources = [cell.get("source", "") for cell in cells if cell.get("cell_type") == "code"]
    except (ValueError, AttributeError, TypeError):
        return ""
    return "\n".join("".join(source) if isinstance(source, list) else str(source) for source in sources)


def find_dependents(given: list[SourceFile], configs: Config | Configs) -> list[SourceFile]:
    """The files of the given files' projects (found as a check of the project's root finds them:
    its excludes apply) that import one of the given Python files, directly or through other
    modules, sorted; the given files themselves are not among them."""
    changed: set[str] = set()
    roots: dict[Path, None] = {}
    for source_file in given:
        if is_notebook(source_file.path):
            continue  # nothing imports a notebook
        layout = layout_for(source_file.path, _config(source_file, configs).src)
        if layout is None:
            continue  # in no project (a script outside the source folders is still imported by its neighbours)
        changed.add(os.path.abspath(source_file.path))
        roots[layout.root] = None
    if not changed:
        return []
    candidates: dict[str, SourceFile] = {}  # absolute paths, as text (cheaper than Path objects)
    for root in roots:
        found, _errors = collect_files([_shown(root)], configs)
        for source_file in found:
            absolute = os.path.abspath(source_file.path)
            if absolute not in candidates:
                display = os.path.normpath(source_file.display)
                candidates[absolute] = SourceFile(Path(display), display, False, source_file.config)

    def layout_of(path: str) -> Layout | None:
        return layout_for(path, _config(candidates[path], configs).src)

    importers = find_importers(changed, candidates, _import_text, layout_of, Reading.TEXT, transitive=True)
    given_paths = {os.path.abspath(source_file.path) for source_file in given}  # notebooks and scripts too
    return sorted((candidates[path] for path in importers if path not in given_paths),
                  key=lambda source_file: source_file.display)


def _import_text(path: str) -> str | None:
    """The text whose imports count (a notebook's code cells); None: unreadable or no import."""
    try:
        with open(path, "rb") as stream:
            data = stream.read()
    except OSError:
        return None
    if b"import" not in data:
        return None
    return notebook_code(data) if is_notebook(path) else data.decode("utf-8", errors="replace")


def _config(source_file: SourceFile, configs: Config | Configs) -> Config:
    if source_file.config is not None:
        return source_file.config
    return configs if isinstance(configs, Config) else configs.for_file(source_file.path)


def _shown(root: Path) -> str:
    """The root as the walk should name its files: relative to the working directory when inside it."""
    relative = os.path.relpath(root)
    return relative if not relative.startswith("..") else str(root)


Stamp = tuple  # (inode, size, mtime, ctime in nanoseconds): see `file_stamp`
# What `import_closure` read of each file: path -> (stamp, package, imported names); a file whose
# stamp is unchanged is not read again (an editor re-reads the closure at every lint).
_SCANNED: dict[str, tuple[Stamp, str | None, list[str]]] = {}
MAX_SCANNED = 20_000


def file_stamp(path: str) -> Stamp | None:
    """The file's identity, size and modification and status-change times; None if it is not
    there. Any write changes the status-change time, which no program sets back."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns


def import_closure(text: str, path: Path | str, layout: Layout, limit: int = 2_000) -> dict[str, Stamp | None]:
    """The project files that importing the file at `path` (its `text`) runs, directly or through
    each other, each with its stamp (`file_stamp`, taken before it was read: a later write shows;
    None: not there). A file `project_layout.overlaid` gives (an editor's buffer) is read from
    there, and its stamp is the file's. A file read before with the same stamp is not read again.
    At most `limit` files."""
    found: dict[str, Stamp | None] = {}
    resolved: dict = {}
    pending = list(module_imports(text, path, layout, resolved))
    while pending and len(found) < limit:
        current = pending.pop()
        if current in found:
            continue
        stamp = found[current] = file_stamp(current)
        names = _names_in(current, stamp, layout)
        if names:
            pending += [target for target in _resolve(names, current, layout, resolved) if target not in found]
    return found


def _names_in(path: str, stamp: Stamp | None, layout: Layout) -> list[str]:
    buffer = buffer_text(path)
    package = layout.package_of(path)
    if buffer is not None:
        return _imported(buffer, package) if "import" in buffer else []
    known = _SCANNED.get(path)
    if known is not None and stamp is not None and known[0] == stamp and known[1] == package:
        return known[2]
    try:
        data = read_source(path)
    except OSError:
        return []
    names = _imported(data.decode("utf-8", errors="replace"), package) if b"import" in data else []
    if stamp is not None:
        if len(_SCANNED) >= MAX_SCANNED:
            _SCANNED.clear()
        _SCANNED[path] = (stamp, package, names)
    return names
