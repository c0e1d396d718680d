"""Finding the files to check: recursion, excludes, explicit paths, bad paths."""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from pathlib import Path

from tfproc_lint.config import Config
from tfproc_lint.diagnostics import FileError


@dataclass(frozen=True)
class SourceFile:
    path: Path
    display: str  # as the user will read it: relative to the working directory when possible


def is_excluded(path: Path, patterns: tuple[str, ...]) -> bool:
    """A pattern matches a file or directory name, or a path relative to the working directory."""
    name = path.name
    text = _display(path)
    return any(fnmatch.fnmatch(name, pattern) or fnmatch.fnmatch(text, pattern) for pattern in patterns)


def _display(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return str(path)


def collect_files(paths: list[str], config: Config) -> tuple[list[SourceFile], list[FileError]]:
    """Python files under `paths`. Explicit files are always checked, whatever their name."""
    patterns = config.exclude + config.extend_exclude
    files: list[SourceFile] = []
    errors: list[FileError] = []
    seen: set[str] = set()

    def add(path: Path, display: str) -> None:
        key = os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            files.append(SourceFile(path, display))

    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            def unreadable(error: OSError, root: str = raw) -> None:
                errors.append(FileError(error.filename or root, f"cannot read directory: {error.strerror}"))

            for directory, subdirectories, names in os.walk(path, onerror=unreadable):
                base = Path(directory)
                subdirectories[:] = sorted(d for d in subdirectories if not is_excluded(base / d, patterns))
                for name in sorted(names):
                    candidate = base / name
                    if name.endswith(".py") and not is_excluded(candidate, patterns) and candidate.is_file():
                        add(candidate, _display(candidate))
        elif path.is_file():
            add(path, raw)
        elif path.exists():
            errors.append(FileError(raw, "not a regular file or directory"))
        elif path.is_symlink():
            errors.append(FileError(raw, "broken symbolic link"))
        else:
            errors.append(FileError(raw, "no such file or directory"))
    return files, errors
