"""Each document's configuration, read as `tfproc-lint check` reads it when run from the
document's folder: the nearest pyproject.toml or setup.cfg upwards (and requirements*.txt for
assume-gpu). Loaded once per project root, forgotten when one of those files changes: as the
client reports (file watchers, a saved config file), or as `changed` finds when a linted file is
saved (for clients that report neither, such as Neovim on Linux by default)."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Callable

from tfproc_lint.config import Config, ConfigError, find_project_root, load_config
from tfproc_lint.rules import rule_codes

# A change to one of these files can change a configuration.
CONFIG_FILES = ("pyproject.toml", "setup.cfg")
WATCHED_GLOBS = ("**/pyproject.toml", "**/setup.cfg", "**/requirements*.txt",
                 "**/*.py")  # a project module changed on disk: the documents that import it


def is_config_file(path: str) -> bool:
    name = Path(path).name
    return name in CONFIG_FILES or (name.startswith("requirements") and name.endswith(".txt"))


class Configs:
    """Configurations by project root. `report(level, line)` tells the user about a bad file
    (level "error") or a warning the CLI would print ("warning"); each once until it changes."""

    def __init__(self, report: Callable[[str, str], None], default_root: Path | None = None) -> None:
        self._report = report
        self._default_root = default_root
        self._by_root: dict[Path | None, Config] = {}
        self._good: dict[Path | None, Config] = {}  # the last configuration that loaded, per root
        self._lock = threading.Lock()  # used from the event loop and the lint thread
        self._reported: set[str] = set()
        # What the configurations were read from: for each document folder, the project files of
        # it and its parents (which decide the root) and its root; for each root, its files.
        self._chains: dict[Path, tuple[dict[str, tuple | None], Path | None]] = {}
        self._root_files: dict[Path, dict[str, tuple | None]] = {}

    def for_path(self, path: Path | None) -> Config:
        start = path.parent if path is not None else self._default_root
        if start is None or not start.is_dir():
            start = root = None
        else:
            chain = _stats(_chain_files(start))  # taken before reading: a later change shows
            root = find_project_root(start)
        with self._lock:
            if start is not None:
                self._chains.setdefault(start, (chain, root))
            if root in self._by_root:
                return self._by_root[root]
        root_files = _stats(_files_of_root(root)) if root is not None else {}
        config = self._load(root)
        with self._lock:
            self._by_root[root] = config
            if root is not None:
                self._root_files.setdefault(root, root_files)
        return config

    def changed(self, path: Path | None) -> str | None:
        """A configuration file that changed since the configuration of the document at `path`
        was read (created, edited or removed), or None."""
        if path is None:
            return None
        with self._lock:
            chain, root = self._chains.get(path.parent, (None, None))
            root_files = self._root_files.get(root) if root is not None else None
        for recorded, now in ((chain, _stats(_chain_files(path.parent)) if chain is not None else None),
                              (root_files, _stats(_files_of_root(root)) if root_files is not None else None)):
            if recorded is not None:
                differing = [name for name in {*recorded, *now} if recorded.get(name) != now.get(name)]
                if differing:
                    return min(differing)
        return None

    def _load(self, root: Path | None) -> Config:
        try:
            config = load_config(root) if root is not None else Config()
            config.check_selectors(rule_codes())
        except ConfigError as error:
            fallback = self._good.get(root, Config())
            kept = "the last configuration that loaded" if root in self._good else "the default configuration"
            self._once("error", f"configuration error: {error}; using {kept} until it is fixed")
            return fallback
        for warning in config.warnings:
            self._once("warning", warning)
        self._good[root] = config
        return config

    def _once(self, level: str, line: str) -> None:
        if line not in self._reported:
            self._reported.add(line)
            self._report(level, line)

    def forget(self) -> None:
        """Re-read every configuration when next asked (a config file changed)."""
        with self._lock:
            self._by_root.clear()
            self._reported.clear()
            self._chains.clear()
            self._root_files.clear()


def _chain_files(start: Path) -> list[Path]:
    """The project files that decide which directory is the root for code in `start`."""
    return [directory / name for directory in [start, *start.parents] for name in CONFIG_FILES]


def _files_of_root(root: Path) -> list[Path]:
    """The files a root's configuration is read from (requirements*.txt: `assume-gpu`)."""
    try:
        requirements = sorted(root.glob("requirements*.txt"))
    except OSError:
        requirements = []
    return [root / name for name in CONFIG_FILES] + requirements


def _stats(paths: list[Path]) -> dict[str, tuple | None]:
    """Each file's identity and change stamps (None where it does not exist)."""
    found = {}
    for path in paths:
        try:
            stat = os.stat(path)
        except OSError:
            found[str(path)] = None
        else:
            found[str(path)] = (stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)
    return found
