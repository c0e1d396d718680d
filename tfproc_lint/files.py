"""Finding the files to check: recursion, excludes, explicit paths, bad paths."""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass
from pathlib import Path

from tfproc_lint.config import Config
from tfproc_lint.diagnostics import FileError


@dataclass(frozen=True)
class SourceFile:
    path: Path
    display: str  # as the user will read it: relative to the working directory when possible


class Excluder:
    """Patterns match a file or directory name, or its path as given (fnmatch syntax)."""

    def __init__(self, patterns: tuple[str, ...]) -> None:
        self._match = re.compile("|".join(fnmatch.translate(p) for p in patterns)).match if patterns else None

    def __call__(self, name: str, path: str) -> bool:
        if self._match is None:
            return False
        return bool(self._match(name) or self._match(path) or (path.startswith("./") and self._match(path[2:])))


def collect_files(paths: list[str], config: Config,
                  force_exclude: bool = False) -> tuple[list[SourceFile], list[FileError]]:
    """Python files under `paths`. Files named explicitly are checked whatever their name, and
    excluded only with `force_exclude` (pre-commit names every file)."""
    excluded = Excluder(config.exclude + config.extend_exclude)
    files: list[SourceFile] = []
    errors: list[FileError] = []
    seen: set[str] = set()

    def add(path: str) -> None:
        key = os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            files.append(SourceFile(Path(path), path))

    for raw in paths:
        if os.path.isdir(raw):
            def unreadable(error: OSError, root: str = raw) -> None:
                errors.append(FileError(error.filename or root, f"cannot read directory: {error.strerror}"))

            for directory, subdirectories, names in os.walk(raw, onerror=unreadable):
                subdirectories[:] = sorted(
                    d for d in subdirectories if not excluded(d, os.path.join(directory, d)))
                for name in sorted(names):
                    candidate = os.path.join(directory, name)
                    if name.endswith(".py") and not excluded(name, candidate) and os.path.isfile(candidate):
                        add(candidate)
        elif os.path.isfile(raw):
            if not (force_exclude and (excluded(os.path.basename(raw), raw) or _in_excluded_directory(raw, excluded))):
                add(raw)
        elif os.path.lexists(raw) and not os.path.exists(raw):
            errors.append(FileError(raw, "broken symbolic link"))
        elif os.path.exists(raw):
            errors.append(FileError(raw, "not a regular file or directory"))
        else:
            errors.append(FileError(raw, "no such file or directory"))
    return files, errors


def _in_excluded_directory(path: str, excluded: Excluder) -> bool:
    parts = os.path.normpath(path).split(os.sep)[:-1]
    return any(excluded(part, os.sep.join(parts[: i + 1])) for i, part in enumerate(parts))
