"""The project's modules as the analysis of one file sees them: their summaries, computed on demand.

A `Project` (one per project root and configuration, kept for the life of the process) reads a
module's file when another module's analysis first asks for it, analyses it (with the project too,
so that what it imports counts), and keeps its summary by the file's content: an edited file is
summarised again on the next request. While one file is linted (`Project.lint_scope`), every module
file consulted, directly or through another module's summary, is recorded with its content digest
(`used`): a cached result is valid only while those files are unchanged (cache.py).

A module whose text names neither TensorFlow, Keras nor a start method, and imports no project
module that does, is summarised without LibCST (its re-exports only).
"""

from __future__ import annotations

import hashlib
import os
import re
from contextlib import contextmanager
from pathlib import Path

from tfproc_lint.analysis.file_analysis import FileAnalysis
from tfproc_lint.analysis.summaries import ModuleSummary, ProjectNames, summarize
from tfproc_lint.config import Config, display_path
from tfproc_lint.files import collect_files
from tfproc_lint.parsing import parse_guarded
from tfproc_lint.project_layout import MAX_IMPORT_DEPTH, Layout, imported_names, layout_for, may_reach_tensorflow
from tfproc_lint.source import SourceError, decode

MAX_PROJECTS = 16
MAX_SCANNED_FILES = 20_000  # a project's files read to find its entry points' start methods
_SET_START_METHOD = re.compile(r"set_start_method\(\s*(?:method\s*=\s*)?(['\"])(\w+)\1")


class Project:
    def __init__(self, layout: Layout, config: Config) -> None:
        self.layout = layout
        self.config = config
        # path -> (content digest, summary, the files (path, digest) it was computed from)
        self._summaries: dict[Path, tuple[str, ModuleSummary | None, frozenset]] = {}
        self._active: set[Path] = set()
        self.used: set[tuple[str, str]] | None = None  # (path, digest) consulted in the current lint
        # Within one lint, a module's answer is read once: (module, importer's folder) -> result.
        self._answers: dict[tuple, ModuleSummary | None] | None = None
        self._entry_points: list[tuple[Path, str, int]] | None = None
        self._closures: dict[Path, set[Path]] = {}

    def names_for(self, path: Path | str) -> ProjectNames:
        """How names in the file at `path` resolve through the project's modules."""
        path = Path(path)
        return ProjectNames(lambda name: self.summary(name, path), self.layout.package_of(path),
                            entry_start_method=lambda: self.entry_start_method(path))

    # entry points ---------------------------------------------------------------------------------
    def entry_start_method(self, path: Path) -> tuple[str, str] | None:
        """(method, why) when the project's entry points that import the module at `path`
        (directly or through other project modules) and set a start method all set the same one:
        it holds when the module runs. None when none does, or they disagree (then "unknown")."""
        target = Path(os.path.abspath(path))
        methods = {}
        for entry, method, line in self._entries():
            if entry != target and target in self._imports_closure(entry):
                methods.setdefault(method, (entry, line))
        if not methods:
            return None
        if len(methods) > 1 or "unknown" in methods:
            return "unknown", "the entry points that import this module set different start methods"
        method, (entry, line) = next(iter(methods.items()))
        return method, f'set_start_method("{method}") in {display_path(entry)}:{line}, an entry point that imports it'

    def _entries(self) -> list[tuple[Path, str, int]]:
        """(file, method, line) of the project's scripts (an `if __name__ == "__main__":` block) that
        call set_start_method with one literal method; "unknown" when it is not one literal."""
        if self._entry_points is None:
            found = []
            files, _ = collect_files([str(self.layout.root)], self.config)
            for source_file in files[:MAX_SCANNED_FILES]:
                if source_file.path.suffix != ".py":
                    continue
                try:
                    text = source_file.path.read_text(encoding="utf-8", errors="replace")
                except OSError:
                    continue
                if "set_start_method" not in text or "__main__" not in text:
                    continue
                literals = {match.group(2) for match in _SET_START_METHOD.finditer(text)}
                line = text.count("\n", 0, text.find("set_start_method")) + 1
                method = literals.pop() if len(literals) == 1 and literals <= {"fork", "spawn", "forkserver"} \
                    else "unknown"
                found.append((Path(os.path.abspath(source_file.path)), method, line))
            self._entry_points = found
        return self._entry_points

    def _imports_closure(self, path: Path) -> set[Path]:
        """The project files `path` imports, directly or through each other (read as text)."""
        closure = self._closures.get(path)
        if closure is None:
            closure = self._closures[path] = set()
            pending = [(path, 0)]
            while pending:
                current, depth = pending.pop()
                try:
                    text = current.read_text(encoding="utf-8", errors="replace")
                except OSError:
                    continue
                for name in imported_names(text, self.layout.package_of(current)):
                    target = self.layout.module_path(name, current)
                    if target is not None:
                        target = Path(os.path.abspath(target))
                        if target not in closure and depth < MAX_IMPORT_DEPTH:
                            closure.add(target)
                            pending.append((target, depth + 1))
        return closure

    @contextmanager
    def lint_scope(self):
        """Record the module files consulted while linting one file (`used`)."""
        previous, self.used = self.used, set()
        answers, self._answers = self._answers, {}
        try:
            yield self.used
        finally:
            if previous is not None:
                previous |= self.used
            self.used, self._answers = previous, answers

    def summary(self, module: str, importer: Path | None = None) -> ModuleSummary | None:
        key = (module, importer.parent if importer is not None else None)
        if self._answers is not None and key in self._answers:
            answer, consulted = self._answers[key]
            if self.used is not None:
                self.used |= consulted
            return answer
        outer, self.used = self.used, set()
        try:
            answer = self._summary(module, importer)
        finally:
            consulted, self.used = self.used, outer
        if self.used is not None:
            self.used |= consulted
        if self._answers is not None:
            self._answers[key] = (answer, frozenset(consulted))
        return answer

    def _summary(self, module: str, importer: Path | None) -> ModuleSummary | None:
        path = self.layout.module_path(module, importer)
        if path is None or path in self._active:  # not ours, or an import cycle: nothing more here
            return None
        try:
            data = path.read_bytes()
        except OSError:
            return None
        digest = hashlib.blake2b(data, digest_size=20).hexdigest()
        known = self._summaries.get(path)
        if known is None or known[0] != digest:
            known = self._summarize(path, module, data, digest)
            self._summaries[path] = known
        if self.used is not None:
            self.used.add((str(path), digest))
            self.used |= known[2]
        return known[1]

    def _summarize(self, path: Path, module: str, data: bytes, digest: str):
        self._active.add(path)
        consulted: set[tuple[str, str]] = set()
        previous, self.used = self.used, consulted
        try:
            summary = self._compute(path, module, data)
        finally:
            self.used = previous
            self._active.discard(path)
        return digest, summary, frozenset(consulted)

    def _compute(self, path: Path, module: str, data: bytes) -> ModuleSummary | None:
        try:
            text = decode(data).text
        except SourceError:
            return None
        display = display_path(path)
        own_name = self.layout.module_name(path) or module
        if not any(word in text for word in ("tensorflow", "keras", "set_start_method")) \
                and not may_reach_tensorflow(text, path, self.layout):
            package = self.layout.package_of(path)
            exports = {name.rpartition(".")[2]: name for name in imported_names(text, package) if "." in name}
            return ModuleSummary(own_name, display, exports=exports)
        try:
            tree = parse_guarded(text)
            analysis = FileAnalysis(tree, display, self.config, project=self.names_for(path))
            return summarize(analysis, own_name, display)
        except (SourceError, RecursionError):
            return None


_PROJECTS: dict[tuple, Project] = {}


def project_for(path: str | Path, config: Config) -> Project | None:
    """The project of the file at `path` (None: project analysis is off, or the file is in no
    project). Kept per root and configuration for the life of the process."""
    if not config.project_analysis:
        return None
    layout = layout_for(path, config.src)
    if layout is None:
        return None
    key = (layout, config.target_python, config.assume_start_method)  # what a summary can depend on
    project = _PROJECTS.get(key)
    if project is None:
        if len(_PROJECTS) >= MAX_PROJECTS:
            _PROJECTS.pop(next(iter(_PROJECTS)))
        project = _PROJECTS[key] = Project(layout, config)
    return project
