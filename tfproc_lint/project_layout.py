"""Where a file sits in its project: the project's root, its source folders, the file's module name,
and the file a module name points to. Plain paths and names (no LibCST), so that the command line
can ask before it imports the engine.

The root is the nearest folder, from the file upwards, that holds a pyproject.toml, setup.cfg,
setup.py or .git; a file in none is checked alone (an installed or vendored tree of packages is
not read as one project). Modules are found in the source folders: `src` (configured as in Ruff,
relative to the root), by default the root itself and its `src` folder. A folder is a package whether it holds an
`__init__.py` or not (namespace packages), as Python's import system finds them.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from tfproc_lint.knowledge import packages, processes
from tfproc_lint.records import record

ROOT_MARKERS = ("pyproject.toml", "setup.cfg", "setup.py", ".git")
DEFAULT_SOURCE_FOLDERS = (".", "src")
MODULE_SUFFIXES = (".py",)


@record
class Layout:
    root: Path
    sources: tuple[Path, ...]  # absolute, in the order modules are looked up

    def module_name(self, path: Path | str) -> str | None:
        """The dotted module name of a file in this project (`pkg.models`; a package's `__init__.py`
        is the package), or None when it is in none of the source folders."""
        path = Path(os.path.abspath(path))
        if path.suffix not in MODULE_SUFFIXES:
            return None
        for source in sorted(self.sources, key=lambda s: -len(s.parts)):  # the innermost folder names it
            try:
                parts = list(path.relative_to(source).with_suffix("").parts)
            except ValueError:
                continue
            if parts and parts[-1] == "__init__":
                parts.pop()
            if parts and all(part.isidentifier() for part in parts):
                return ".".join(parts)
        return None

    def module_path(self, name: str, importer: Path | str | None = None) -> Path | None:
        """The file that module `name` is read from (`a/b.py` or `a/b/__init__.py`), or None: a
        third-party module, or one that does not exist. A script outside any package (its folder
        has no `__init__.py`) also finds its neighbours: run as `python tools/run.py`, its folder
        comes first on `sys.path`."""
        if importer is not None:
            found = _script_neighbour(os.path.dirname(os.path.abspath(importer)), name)
            if found is not None:
                return found
        return _module_path(self.sources, name)

    def package_of(self, path: Path | str) -> str | None:
        """The package relative imports in `path` start from (`pkg` for `pkg/models.py` and for
        `pkg/__init__.py`); "" for a top-level module; None outside the source folders."""
        name = self.module_name(path)
        if name is None:
            return None
        if Path(path).name == "__init__.py":
            return name
        return name.rpartition(".")[0]


@functools.lru_cache(maxsize=4096)
def _is_package(folder: Path) -> bool:
    return (folder / "__init__.py").exists()


@functools.lru_cache(maxsize=16384)
def _script_neighbour(folder: str, name: str) -> Path | None:
    """Module `name` beside a script outside any package (`folder` holds no `__init__.py`), or None.
    Cached by the folder's text: a large project asks for every import of every module."""
    directory = Path(folder)
    return None if _is_package(directory) else _module_path((directory,), name)


@functools.lru_cache(maxsize=16384)
def _module_path(sources: tuple[Path, ...], name: str) -> Path | None:
    parts = name.split(".")
    if not all(part.isidentifier() for part in parts):
        return None
    for source in sources:
        base = source.joinpath(*parts)
        for candidate in (base.with_name(base.name + ".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate
    return None


def find_root(start: Path) -> Path | None:
    """The nearest folder from `start` (a folder) upwards that holds a project marker."""
    for directory in [start, *start.parents]:
        if any((directory / marker).exists() for marker in ROOT_MARKERS):
            return directory
    return None


@functools.lru_cache(maxsize=1024)
def _layout_for_directory(directory: Path, src: tuple[str, ...]) -> Layout | None:
    root = find_root(directory)
    if root is None:
        return None
    folders = src or DEFAULT_SOURCE_FOLDERS
    sources = tuple(dict.fromkeys(Path(os.path.normpath(root / folder)) for folder in folders))
    return Layout(root, tuple(s for s in sources if s.is_dir()))


def layout_for(path: Path | str, src: tuple[str, ...] = ()) -> Layout | None:
    """The layout of the project `path` (a file) belongs to, or None outside any project."""
    directory = Path(os.path.abspath(path)).parent
    return _layout_for_directory(directory, tuple(src))


# An editor's unsaved buffers (absolute path -> text), read instead of those files by the project
# layer in the thread that set them (`overlaid`): the language server lints with them.
_OVERLAY: ContextVar[Mapping[str, str]] = ContextVar("tfproc_lint_overlay", default={})


@contextmanager
def overlaid(texts: Mapping[str, str]):
    """While in this block, in this thread, read the project's files at these absolute paths from
    `texts` (an editor's unsaved buffers) instead of the disk. What a project worked out from a
    file is kept until `project.forget_files` names it: call it whenever a path's text changes,
    as the editor server does for each edit, close, save or change on disk."""
    token = _OVERLAY.set(texts)
    try:
        yield
    finally:
        _OVERLAY.reset(token)


def buffer_text(path: Path | str) -> str | None:
    """The editor buffer's text that `overlaid` gives for the file at `path`, or None."""
    overlay = _OVERLAY.get()
    return overlay.get(os.path.abspath(path)) if overlay else None


def read_source(path: Path | str) -> bytes:
    """A project file's bytes: its editor buffer's text where `overlaid` gives one, else the file's
    (OSError when it cannot be read)."""
    text = buffer_text(path)
    if text is not None:
        return text.encode("utf-8", "surrogatepass")
    with open(path, "rb") as stream:
        return stream.read()


def clear_caches() -> None:
    """Forget what was looked up on disk (the editor server calls this when files appear)."""
    _module_path.cache_clear()
    _script_neighbour.cache_clear()
    _is_package.cache_clear()
    _SCANS.clear()
    _layout_for_directory.cache_clear()


def absolute_module(level: int, module: str, package: str | None) -> str | None:
    """The module `from <level dots><module> import ...` names, written in a module of `package`
    ("" for a top-level module): `from ..io import x` in `pkg.sub` is `pkg.io`. None when it
    cannot be told (the package is unknown, or the dots climb out of it)."""
    if not level:
        return module or None
    if package is None:
        return None
    parts = package.split(".") if package else []
    if level - 1 > len(parts):
        return None
    return ".".join([*parts[:len(parts) - level + 1], *([module] if module else [])]) or None


# `import a.b as c, d` / `from .a.b import (c, d)`: what a file imports, read from its text (an
# over-approximation: commented or quoted imports count too, which only lets more files through).
_IMPORT_LINE = re.compile(
    r"^[ \t]*(?:from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+\(?([\w, \t*]+)|import[ \t]+([\w., \t]+))", re.MULTILINE)
# Words without which a module neither runs TensorFlow nor sets a start method (not read further).
TENSORFLOW_WORDS = (*packages.TENSORFLOW_MARKERS, processes.SET_START_METHOD.rpartition(".")[2])
MAX_IMPORT_DEPTH = 6
# How far a helper that makes a runtime setting is looked for through imports: the module a file
# imports, or one that module imports (each file that imports project modules pays this search).
MAX_SETTING_IMPORT_DEPTH = 2


def imported_names(text: str, package: str | None) -> list[str]:
    """The modules (and `from` names, which may be modules) that `text` imports, absolute."""
    found = []
    for dots, module, names, plain in _IMPORT_LINE.findall(text):
        if plain:
            found += [part.split(" as ")[0].strip() for part in plain.split(",") if part.strip()]
            continue
        module = absolute_module(len(dots), module, package)
        if not module:
            continue
        found.append(module)
        found += [f"{module}.{name.split(' as ')[0].strip()}" for name in names.split(",")
                  if name.strip() and name.strip() != "*"]
    return found


def may_reach_tensorflow(text: str, path: Path | str, layout: Layout) -> bool:
    """`text` (the file at `path`) imports, directly or through other project modules, a project
    module that names TensorFlow, Keras or a start method: a file whose own text names none may
    still run TensorFlow through it (the pre-filter lets such a file through). Reads files only."""
    return project_imports(text, path, layout) is True


def project_imports(text: str, path: Path | str, layout: Layout, names=None,
                    max_depth: int = MAX_IMPORT_DEPTH) -> bool | None:
    """None: `text` imports no module of the project (its pre-filter verdict depends on it alone);
    True: one of them, directly or through others (`max_depth` imports deep), names TensorFlow,
    Keras or a start method (or, given `names(text)`, what that predicate looks for); False: it
    imports project modules, none of which does."""
    found = None
    seen: set[Path] = set()
    pending = [(_imported_files(text, Path(path), layout), 0)]
    while pending:
        targets, depth = pending.pop()
        for target in targets:
            if target in seen:
                continue
            seen.add(target)
            found = False
            scanned = _scan(target, layout, names)
            if scanned is None:
                continue
            matches, further = scanned
            if matches:
                return True
            if depth + 1 < max_depth:
                pending.append((further, depth + 1))
    return found


def _imported_files(text: str, path: Path, layout: Layout) -> tuple[Path, ...]:
    found = (layout.module_path(name, path) for name in imported_names(text, layout.package_of(path)))
    return tuple(target for target in found if target is not None)


# A module file's scan (whether it names what is looked for, the project files it imports), by its
# path, size and modification time: each file that imports it asks again (an editor buffer is read anew).
_SCANS: dict[tuple, tuple[bool, tuple[Path, ...]]] = {}


def _scan(target: Path, layout: Layout, names) -> tuple[bool, tuple[Path, ...]] | None:
    key = None
    if buffer_text(target) is None:
        try:
            stat = os.stat(target)
        except OSError:
            return None
        # The layout by its fields (a record's hash is worked out at each call): asked per import of every file.
        key = (target, layout.root, layout.sources, names, stat.st_mtime_ns, stat.st_size)
        known = _SCANS.get(key)
        if known is not None:
            return known
    try:
        imported = read_source(target).decode("utf-8", errors="replace")
    except OSError:
        return None
    matches = names(imported) if names is not None else any(word in imported for word in TENSORFLOW_WORDS)
    result = (matches, () if matches else _imported_files(imported, target, layout))
    if key is not None:
        _SCANS[key] = result
    return result
