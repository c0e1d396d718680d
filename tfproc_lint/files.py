"""Finding the files to check: recursion, excludes, explicit paths, bad paths."""

from __future__ import annotations

import errno
import fnmatch
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from tfproc_lint.config import PROJECT_FILES, Config, Configs
from tfproc_lint.diagnostics import FileError


SUFFIXES = (".py", ".ipynb")


def is_notebook(path) -> bool:
    return str(path).endswith(".ipynb")


@dataclass(frozen=True)
class SourceFile:
    path: Path
    display: str  # as the user will read it: relative to the working directory when possible
    explicit: bool = False  # named on the command line: always decoded, so bad bytes get a reason
    # The file's own configuration (the nearest project's, with the command line over it); None:
    # the caller's.
    config: Config | None = field(default=None, compare=False)


class Excluder:
    """Patterns match a file or directory name, or its path as given (fnmatch syntax)."""

    def __init__(self, patterns: tuple[str, ...]) -> None:
        self._match = re.compile("|".join(fnmatch.translate(p) for p in patterns)).match if patterns else None

    def __call__(self, name: str, path: str) -> bool:
        if self._match is None:
            return False
        return bool(self._match(name) or self._match(path) or (path.startswith("./") and self._match(path[2:])))


def collect_files(paths: list[str], configs: Config | Configs,
                  force_exclude: bool = False) -> tuple[list[SourceFile], list[FileError]]:
    """Python files and Jupyter notebooks under `paths`, each with its configuration: one `Config`
    for all, or `Configs`, the nearest project's for each directory (whose excludes then apply to
    what the walk finds in it). Files named explicitly are checked whatever their name, and
    excluded only with `force_exclude` (pre-commit names every file). Symbolic links to
    directories are not followed, so loops cannot trap the walk."""
    settings = _Settings(configs)
    files: list[SourceFile] = []
    errors: list[FileError] = []
    seen: set[str] = set()
    overlapping = len(paths) > 1  # only then can one file be reached twice

    def add(path: str, config: Config, explicit: bool = False, key: str | None = None) -> None:
        if overlapping:
            key = key or os.path.realpath(path)
            if key in seen:
                return
            seen.add(key)
        files.append(SourceFile(Path(path), path, explicit, config.for_path(path)))  # its per-file-ignores

    for raw in paths:
        if os.path.isdir(raw):
            real_root = os.path.realpath(raw) if overlapping else ""
            for path, is_link, config in _walk(raw, settings, errors):
                # The walk follows no directory link, so below the root only a linked file can
                # lead elsewhere; resolving only those saves a stat per path component per file.
                key = None if is_link or not overlapping else os.path.join(real_root, path[len(raw):].lstrip(os.sep))
                add(path, config, key=key)
        elif os.path.isfile(raw):
            config, excluded = settings.of(os.path.dirname(raw) or ".")
            if not (force_exclude and (excluded(os.path.basename(raw), raw) or _in_excluded_directory(raw, excluded))):
                add(raw, config, explicit=True)
        else:
            errors.append(FileError(raw, _why_not_a_file(raw)))
    return files, errors


class _Settings:
    """The configuration and the excluder for each directory, shared by the directories of one project."""

    def __init__(self, configs: Config | Configs) -> None:
        self.configs = configs
        self.excluders: dict[int, tuple[Config, Excluder]] = {}

    def of(self, directory: str) -> tuple[Config, Excluder]:
        config = self.configs.for_directory(directory) if isinstance(self.configs, Configs) else self.configs
        if id(config) not in self.excluders:
            self.excluders[id(config)] = (config, Excluder(config.exclude + config.extend_exclude))
        return self.excluders[id(config)]

    def below(self, directory: str, names: set[str], above: tuple[Config, Excluder]) -> tuple[Config, Excluder]:
        """A subdirectory's: its parent's (`above`) unless it holds a project file of its own (the
        walk has its names already: no stat for the others)."""
        if isinstance(self.configs, Configs) and not names.isdisjoint(PROJECT_FILES):
            return self.of(directory)
        return above


def _walk(root: str, settings: _Settings, errors: list[FileError]):
    """(path, is a symbolic link, configuration) of the `*.py` and `*.ipynb` files under `root`,
    sorted, depth first (os.scandir: no stat per file)."""
    pending: list[tuple[str, tuple | None]] = [(root, None)]
    while pending:
        directory, above = pending.pop()
        try:
            with os.scandir(directory) as scan:
                entries = sorted(scan, key=lambda entry: entry.name)
        except OSError as error:
            errors.append(FileError(directory, f"cannot read directory: {error.strerror}"))
            continue
        own = settings.of(directory) if above is None else settings.below(
            directory, {entry.name for entry in entries}, above)
        config, excluded = own
        subdirectories = []
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if not excluded(entry.name, entry.path):
                        subdirectories.append((entry.path, own))
                elif entry.name.endswith(SUFFIXES) and not excluded(entry.name, entry.path) and entry.is_file():
                    yield entry.path, entry.is_symlink(), config
            except OSError:  # vanished, or a link loop: neither a file nor a directory to walk
                continue
        pending.extend(reversed(subdirectories))


def _why_not_a_file(raw: str) -> str:
    try:
        os.stat(raw)
    except OSError as error:
        if error.errno == errno.ELOOP:
            return "symbolic link loop"
        if os.path.lexists(raw):
            return "broken symbolic link"
        return "no such file or directory"
    return "not a regular file or directory"


def _in_excluded_directory(path: str, excluded: Excluder) -> bool:
    parts = os.path.normpath(path).split(os.sep)[:-1]
    return any(excluded(part, os.sep.join(parts[: i + 1])) for i, part in enumerate(parts))
