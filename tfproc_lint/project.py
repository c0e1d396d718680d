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

import ast
import hashlib
import os
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from tfproc_lint.analysis.callers import calls_after_start
from tfproc_lint.analysis.entry_points import EntryPoint, agreed_start_method, entry_point
from tfproc_lint.analysis.file_analysis import FileAnalysis
from tfproc_lint.analysis.import_effects import ImportEffects, defines_state
from tfproc_lint.analysis.importers import find_importers
from tfproc_lint.analysis.prefilter import names_a_setting
from tfproc_lint.analysis.module_outline import constants, constants_in, outline, text_exports
from tfproc_lint.analysis.project_names import CallerStart, ModuleSummary, Place, ProjectNames
from tfproc_lint.analysis.summaries import summarize
from tfproc_lint.config import Config, display_path
from tfproc_lint.files import collect_files
from tfproc_lint.parsing import parse_guarded
from tfproc_lint.project_layout import (
    MAX_IMPORT_DEPTH, MAX_SETTING_IMPORT_DEPTH, TENSORFLOW_WORDS, Layout, imported_names, layout_for,
    may_reach_tensorflow, project_imports, read_source,
)
from tfproc_lint.source import SourceError, decode, parse_guard

MAX_PROJECTS = 16
MAX_SUMMARY_DEPTH = 2  # summaries of summaries' imports are computed file by file
MAX_CALLER_DEPTH = 2  # modules of a chain of calls whose callers are asked (callers of callers)
MAX_REEXPORT_DEPTH = 2  # package `__init__` files between a module and the files that call it through them
MAX_SCANNED_FILES = 20_000  # a project's files read to find its entry points' start methods


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
        self._entry_points: list[EntryPoint] | None = None
        self._files: list[Path] | None = None  # the project's Python files, when first needed
        self._importers: dict[Path, tuple[tuple[Path, int], ...]] = {}
        # (importing file, depth) -> (its digest, its calls into each module after a start, files read)
        self._callers: dict[tuple[Path, int], tuple[str, dict[str, tuple[CallerStart, ...]], frozenset]] = {}
        self._active_callers: set[Path] = set()
        self._depth = 0  # how deep in summaries of summaries the current request is
        self._import_effects = ImportEffects(layout, self._syntax_tree)  # which modules act at import
        self._closures: dict[Path, set[Path]] = {}
        # Where summaries persist between runs (cache.SummaryStore, set by the front end that has a
        # cache; False: none can be used), and how many function facts each had when last stored or read.
        self.store = None
        self._stored: dict[tuple[Path, bool], int] = {}
        self._served: set[tuple[Path, bool]] = set()  # summaries handed out since the last save

    def names_for(self, path: Path | str) -> ProjectNames:
        """How names in the file at `path` resolve through the project's modules."""
        path = Path(path)
        return ProjectNames(lambda name: self.summary(name, path), self.layout.package_of(path),
                            entry_start_method=lambda: self.entry_start_method(path),
                            importers=lambda: self.importers(path), callers=lambda: self.callers(path))

    # entry points ---------------------------------------------------------------------------------
    def entry_start_method(self, path: Path) -> tuple[str, str] | None:
        """(method, why) when the project's entry points that import the module at `path`
        (directly or through other project modules) and set a start method all set the same one:
        it holds when the module runs. None when none does, or they disagree (then "unknown")."""
        target = Path(os.path.abspath(path))
        if self.layout.module_name(target) is None:
            return None  # not importable as a module of this project: no entry point imports it
        importing = []
        for entry in self._entries():
            closure = self._imports_closure(entry.path)
            if entry.path != target and target in closure:
                importing.append(entry)
                self._consulted(entry.path, *closure)  # a cached result depends on them
        return agreed_start_method(importing)

    def importers(self, path: Path) -> tuple[Place, ...]:
        """Where the project's other files import the module at `path` (each file's first import
        statement that names it), in path order; () when it is no module of the project. Read only
        when asked (a finding's message depends on it): every project file whose text can name the
        module is parsed with CPython's `ast` (analysis/importers.py, shared with --with-dependents)."""
        target = Path(os.path.abspath(path))
        module = self.layout.module_name(target)
        if module is None:
            return ()
        found = tuple(Place(display_path(file), line) for file, line in self._importer_files(target))
        self._consulted(*(Path(place.path) for place in found))  # a cached result depends on them
        return found

    def _importer_files(self, target: Path) -> tuple[tuple[Path, int], ...]:
        """(absolute path, line) of each project file that imports the module file `target`."""
        found = self._importers.get(target)
        if found is None:
            importers = find_importers([target], self._python_files(), _text_or_none, lambda _: self.layout)
            found = self._importers[target] = tuple(sorted(importers.items()))
        return found

    def callers(self, path: Path) -> tuple[CallerStart, ...]:
        """The calls that the project's files which import the module at `path` make into it where
        their runtime may have started (analysis/callers.py), in path order. Read only when asked
        (a fork in the module, with nothing started in its own file): each importing file is
        analysed, once per content; the result depends on what that analysis read."""
        target = Path(os.path.abspath(path))
        module = self.layout.module_name(target)
        if module is None or target in self._active_callers or len(self._active_callers) >= MAX_CALLER_DEPTH:
            return ()
        found: list[CallerStart] = []
        self._active_callers.add(target)
        try:
            for file in self._importers_through_packages(target):
                found += self._calls_into(file, module)
        finally:
            self._active_callers.discard(target)
        return tuple(found)

    def _importers_through_packages(self, target: Path) -> list[Path]:
        """The files that import the module file `target`, and those that import a package
        `__init__.py` importing it (`from pkg import Dispatcher` where `pkg/__init__.py` re-exports
        it from `pkg/dispatch.py`), to `MAX_REEXPORT_DEPTH` packages: a call through the re-export
        is located in `target`'s module by `calls_after_start`, other imports give nothing."""
        found: list[Path] = []
        seen, level = {target}, [target]
        for _ in range(MAX_REEXPORT_DEPTH + 1):
            packages = []
            for module_file in level:
                for file, _ in self._importer_files(module_file):
                    if file not in seen:
                        seen.add(file)
                        found.append(file)
                        if file.name == "__init__.py":
                            packages.append(file)
            level = packages
        return found

    def _calls_into(self, file: Path, module: str) -> tuple[CallerStart, ...]:
        try:
            data = read_source(file)
        except OSError:
            return ()
        digest = hashlib.blake2b(data, digest_size=20).hexdigest()
        key = (file, len(self._active_callers))  # how far up its own callers are asked
        known = self._callers.get(key)
        if known is None or known[0] != digest:
            outer, self.used = self.used, set()
            try:
                calls = self._analyse_caller(file, data)
            finally:
                consulted, self.used = self.used, outer
            known = self._callers[key] = (digest, calls, frozenset(consulted))
        if self.used is not None:
            self.used.add((str(file), digest))
            self.used |= known[2]
        return known[1].get(module, ())

    def _analyse_caller(self, file: Path, data: bytes) -> dict[str, tuple[CallerStart, ...]]:
        """The calls the file at `file` makes into each project module after its runtime may have
        started (analysed once, whichever module asks)."""
        try:
            text = decode(data).text
            syntax_tree = parse_guard(text)
            if syntax_tree is None:
                return {}
            analysis = FileAnalysis(parse_guarded(text), display_path(file), self.config, syntax_tree=syntax_tree,
                                    project=self.names_for(file))
            return calls_after_start(analysis)
        except (SourceError, RecursionError):
            return {}

    def _python_files(self) -> list[Path]:
        if self._files is None:
            files, _ = collect_files([str(self.layout.root)], self.config)
            self._files = sorted(Path(os.path.abspath(f.path)) for f in files[:MAX_SCANNED_FILES]
                                 if f.path.suffix == ".py")
        return self._files

    def _entries(self) -> list[EntryPoint]:
        """The project's scripts (an `if __name__ == "__main__":` block) that call set_start_method."""
        if self._entry_points is None:
            entries = (_entry_point(file) for file in self._python_files())  # the same walk as importers'
            self._entry_points = [entry for entry in entries if entry is not None]
        return self._entry_points

    def forget(self, paths, moved: bool = True) -> None:
        """The files at these absolute paths changed (on disk or in an editor's buffer): drop what
        was worked out from them, and what depends on what they import (summaries that read them,
        which modules act at import, import closures); entry points are read again from them.
        `moved`: files may have been created or removed. For a long-lived process (the editor
        server): a check reads each file once."""
        changed = {str(path) for path in paths}

        def stale(key, known) -> bool:
            read = {*known[2], *_consulted_by(getattr(known[1], "functions", None) or {})}
            return str(key[0]) in changed or any(path in changed for path, _ in read)

        self._summaries = {key: known for key, known in self._summaries.items() if not stale(key, known)}
        self._callers = {key: known for key, known in self._callers.items()
                         if str(key[0]) not in changed and not any(path in changed for path, _ in known[2])}
        # Whether a module acts at import depends on the modules it imports, each of which was
        # asked (and kept) too: a changed file no answer was kept for changes none of them, unless
        # files were created or removed (an import may find another file).
        touched = {Path(path) for path in changed}
        self._import_effects.forget(touched, moved)
        if moved or any(path in touched or touched & closure for path, closure in self._closures.items()):
            self._closures.clear()
        if self._entry_points is not None:
            entries = [entry for entry in self._entry_points if str(entry.path) not in changed]
            for path in sorted(changed):
                if path.endswith(".py") and Path(path).is_relative_to(self.layout.root):
                    entry = _entry_point(Path(path))
                    if entry is not None:
                        entries.append(entry)
            self._entry_points = entries

    def _consulted(self, *paths: Path) -> None:
        if self.used is None:
            return
        for path in paths:
            try:
                self.used.add((str(path), hashlib.blake2b(read_source(path), digest_size=20).hexdigest()))
            except OSError:
                pass

    def _imports_closure(self, path: Path) -> set[Path]:
        """The project files `path` imports, directly or through each other (read as text)."""
        closure = self._closures.get(path)
        if closure is None:
            closure = self._closures[path] = set()
            pending = [(path, 0)]
            while pending:
                current, depth = pending.pop()
                try:
                    text = read_source(current).decode("utf-8", errors="replace")
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
            if previous is None:
                self.save_summaries()

    def summary(self, module: str, importer: Path | None = None) -> ModuleSummary | None:
        """The summary of `module` as imported by the file at `importer`. Modules the linted file
        imports are summarised with the project (their own imports count); the modules those
        import, file by file (MAX_SUMMARY_DEPTH: a package's imports would otherwise pull in
        most of the package for every file)."""
        key = (module, importer.parent if importer is not None else None, self._depth)
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
            data = read_source(path)
        except OSError:
            return None
        digest = hashlib.blake2b(data, digest_size=20).hexdigest()
        with_project = self._depth < MAX_SUMMARY_DEPTH
        known = self._summaries.get((path, with_project))
        if known is None or known[0] != digest:
            known = self._load_stored(path, module, data, digest, with_project) \
                or self._summarize(path, module, data, digest, with_project)
            self._summaries[(path, with_project)] = known
        self._served.add((path, with_project))
        if self.used is not None:
            self.used.add((str(path), digest))
            self.used |= known[2]
            functions = getattr(known[1], "functions", None)
            if isinstance(functions, _DeferredFunctions):
                self.used |= functions.consulted
        return known[1]

    def _summarize(self, path: Path, module: str, data: bytes, digest: str, with_project: bool):
        self._active.add(path)
        consulted: set[tuple[str, str]] = set()
        previous, self.used = self.used, consulted
        self._depth += 1
        try:
            summary = self._compute(path, module, data, with_project)
        finally:
            self._depth -= 1
            self.used = previous
            self._active.discard(path)
        return digest, summary, frozenset(consulted)

    # summaries kept between runs ----------------------------------------------------------------------
    def _store_key(self, path: Path, digest: str, with_project: bool) -> str:
        key = hashlib.blake2b(digest.encode("ascii"), digest_size=20)
        for part in (path, with_project, self.layout, self.config.target_python, self.config.assume_start_method,
                     self.config.default_start_method()):
            key.update(b"\0" + str(part).encode("utf-8", "surrogatepass"))
        return key.hexdigest()

    def _load_stored(self, path: Path, module: str, data: bytes, digest: str, with_project: bool):
        """(digest, summary, consulted) from the store, or None. Function facts not stored (no
        importing module had asked for them) are worked out from the module when asked."""
        if not self.store:
            return None
        entry = self.store.load(self._store_key(path, digest, with_project))
        if entry is None:
            return None
        try:
            summary = ModuleSummary.from_dict(entry["summary"])
            names = set(entry["names"])
            consulted = frozenset((str(p), str(d)) for p, d in entry["deps"])
        except (KeyError, TypeError, ValueError):
            return None

        def analyse() -> ModuleSummary | None:
            _, computed, read = self._summarize(path, module, data, digest, with_project)
            if self.used is not None:
                self.used |= read  # what it read is what the stored facts were read from too
            return computed

        rest = _DeferredFunctions(names - set(summary.functions), self, analyse, with_project)
        functions = _KnownFunctions(dict(summary.functions), rest)
        self._stored[(path, with_project)] = len(summary.functions)
        return digest, replace(summary, functions=functions), consulted

    def save_summaries(self) -> None:
        """Store each summary handed out since the last save that has more function facts than
        when last stored or read (a lint asks for a few modules; the others are unchanged)."""
        served, self._served = self._served, set()
        if not self.store:
            return
        for key in served:
            path, with_project = key
            digest, summary, consulted = self._summaries[key]
            if summary is None:
                continue
            facts, names, more = _facts_so_far(summary.functions)
            if self._stored.get(key, -1) >= len(facts):
                continue
            self._stored[key] = len(facts)
            deps = {(str(path), digest), *consulted, *more}
            self.store.save(self._store_key(path, digest, with_project),
                            {"summary": summary.to_dict(facts), "names": sorted(names), "deps": sorted(deps)})

    def _compute(self, path: Path, module: str, data: bytes, with_project: bool) -> ModuleSummary | None:
        try:
            text = decode(data).text
        except SourceError:
            return None
        display = display_path(path)
        own_name = self.layout.module_name(path) or module
        if not any(word in text for word in TENSORFLOW_WORDS) \
                and not may_reach_tensorflow(text, path, self.layout) and not self._may_make_a_setting(text, path):
            exports = text_exports(text, self.layout.package_of(path))
            return ModuleSummary(own_name, display, exports=exports, constants=constants_in(text))
        try:
            syntax_tree = parse_guard(text)  # positions per statement, not by generating the module
        except SourceError:
            return None
        if syntax_tree is None:
            return None

        def analyse() -> ModuleSummary | None:
            try:
                tree = parse_guarded(text)
                analysis = FileAnalysis(tree, display, self.config, syntax_tree=syntax_tree,
                                        project=self.names_for(path) if with_project else None)
                return summarize(analysis, own_name, display)
            except (SourceError, RecursionError):
                return None

        numbers = constants(syntax_tree)
        package = self.layout.package_of(path)
        if self._import_effects.acts_at_import(path, syntax_tree) or defines_state(syntax_tree, package):
            summary = analyse()
            return replace(summary, constants=numbers) if summary is not None else None
        # Importing it runs no code that can start the runtime or fix the start method: only its
        # functions can matter, and LibCST reads the module when an importing module asks for one.
        names = outline(syntax_tree, package)
        return ModuleSummary(own_name, display,
                             functions=_DeferredFunctions(names.functions, self, analyse, with_project),
                             exports=names.exports, star_exports=names.star_exports, constants=numbers)

    def _may_make_a_setting(self, text: str, path: Path) -> bool:
        """The module, or a project module it imports, names a runtime setting (environment variables
        need no TensorFlow): its functions' facts say which settings they make."""
        return names_a_setting(text) or project_imports(
            text, path, self.layout, names=names_a_setting, max_depth=MAX_SETTING_IMPORT_DEPTH) is True

    def _syntax_tree(self, path: Path) -> ast.Module | None:
        """The module file's CPython syntax tree, recorded as consulted; None if unreadable."""
        try:
            tree = ast.parse(read_source(path))
        except (OSError, SyntaxError, ValueError, RecursionError):
            return None
        self._consulted(path)
        return tree


class _DeferredFunctions(Mapping):
    """The functions of a module whose import runs nothing that matters: their names from CPython's
    tree, their facts from the module's analysis, made when an importing module first asks."""

    def __init__(self, names: set[str], project: Project, analyse, with_project: bool) -> None:
        self._names = names
        self._project = project
        self._analyse = analyse
        self._with_project = with_project
        self._functions: Mapping | None = None
        self.consulted: frozenset = frozenset()  # the files the analysis read (cached results depend on them)

    def _load(self) -> Mapping:
        if self._functions is None:
            project = self._project
            outer, project.used = project.used, set()
            depth, project._depth = project._depth, (0 if self._with_project else MAX_SUMMARY_DEPTH)
            try:
                summary = self._analyse()
            finally:
                consulted, project.used, project._depth = project.used, outer, depth
            self.consulted = frozenset(consulted)
            if project.used is not None:
                project.used |= self.consulted
            self._functions = summary.functions if summary is not None else {}
        return self._functions

    def __contains__(self, name) -> bool:
        return name in self._names and name in self._load()

    def __getitem__(self, name: str):
        if name not in self._names:
            raise KeyError(name)
        return self._load()[name]

    def __iter__(self):
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())


class _KnownFunctions(Mapping):
    """A stored summary's functions: the facts stored, then the rest from the module's analysis
    (`_DeferredFunctions`) when an importing module asks for one of them."""

    def __init__(self, known: dict, rest: _DeferredFunctions) -> None:
        self.known = known
        self.rest = rest

    def __contains__(self, name) -> bool:
        return name in self.known or name in self.rest

    def __getitem__(self, name: str):
        if name in self.known:
            return self.known[name]
        return self.rest[name]

    def __iter__(self):
        yield from self.known
        yield from (name for name in self.rest if name not in self.known)

    def __len__(self) -> int:
        return len(self.known) + len(self.rest._names)


def _facts_so_far(functions) -> tuple[dict, set, frozenset]:
    """(the function facts worked out so far, every function's name, the files read to work them
    out) without working out more."""
    if isinstance(functions, _KnownFunctions):
        facts, names, more = _facts_so_far(functions.rest)
        return {**functions.known, **facts}, names | set(functions.known), more
    if isinstance(functions, _DeferredFunctions):
        if functions._functions is None:
            return {}, set(functions._names), frozenset()
        facts, names, more = _facts_so_far(functions._functions)
        return facts, names, more | functions.consulted
    done = getattr(functions, "done", None)  # summaries._LazyFunctions
    if done is not None:
        return dict(done), set(functions), frozenset()
    return dict(functions), set(functions), frozenset()


def _consulted_by(functions) -> frozenset:
    """The files a summary's function facts were worked out from, so far."""
    return _facts_so_far(functions)[2]


def _entry_point(path: Path) -> EntryPoint | None:
    """The file at `path` as an entry point that sets a start method, or None."""
    try:
        text = read_source(path).decode("utf-8", errors="replace")
    except OSError:
        return None
    return entry_point(path, text)


def forget_files(paths, layout: bool = True) -> None:
    """Files at these absolute paths changed: every project kept in this process forgets what it
    worked out from them (`Project.forget`); with `layout` (they may have been created or removed),
    module lookups start afresh too."""
    from tfproc_lint.project_layout import clear_caches

    if layout:
        clear_caches()
    for project in list(_PROJECTS.values()):
        project.forget(paths, moved=layout)


def _text_or_none(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
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
