"""Each document's configuration, read as `tfproc-lint check` reads it when run from the
document's folder: the nearest pyproject.toml or setup.cfg upwards (and requirements*.txt for
assume-gpu). Loaded once per project root, forgotten when one of those files changes."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Callable

from tfproc_lint.config import Config, ConfigError, find_project_root, load_config
from tfproc_lint.rules import rule_codes

# A change to one of these files can change a configuration.
CONFIG_FILES = ("pyproject.toml", "setup.cfg")
WATCHED_GLOBS = ("**/pyproject.toml", "**/setup.cfg", "**/requirements*.txt")


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

    def for_path(self, path: Path | None) -> Config:
        start = path.parent if path is not None else self._default_root
        root = find_project_root(start) if start is not None and start.is_dir() else None
        with self._lock:
            if root in self._by_root:
                return self._by_root[root]
        config = self._load(root)
        with self._lock:
            self._by_root[root] = config
        return config

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
