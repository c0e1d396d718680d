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
import builtins
import hashlib
import os
import re
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from tfproc_lint.analysis.file_analysis import FileAnalysis
from tfproc_lint.analysis.names import canonical
from tfproc_lint.analysis.project_names import ModuleSummary, Place, ProjectNames
from tfproc_lint.analysis.summaries import summarize
from tfproc_lint.config import Config, display_path
from tfproc_lint.files import collect_files
from tfproc_lint.knowledge import packages, processes, tensorflow
from tfproc_lint.parsing import parse_guarded
from tfproc_lint.project_layout import (
    MAX_IMPORT_DEPTH, TENSORFLOW_WORDS, Layout, absolute_module, imported_names, layout_for, may_reach_tensorflow,
    read_source,
)
from tfproc_lint.source import SourceError, decode, parse_guard

MAX_PROJECTS = 16
MAX_SUMMARY_DEPTH = 2  # summaries of summaries' imports are computed file by file
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
        self._files: list[Path] | None = None  # the project's Python files, when first needed
        self._importers: dict[Path, tuple[Place, ...]] = {}
        self._depth = 0  # how deep in summaries of summaries the current request is
        self._acting: dict[Path, bool] = {}
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
                            importers=lambda: self.importers(path))

    # entry points ---------------------------------------------------------------------------------
    def entry_start_method(self, path: Path) -> tuple[str, str] | None:
        """(method, why) when the project's entry points that import the module at `path`
        (directly or through other project modules) and set a start method all set the same one:
        it holds when the module runs. None when none does, or they disagree (then "unknown")."""
        target = Path(os.path.abspath(path))
        if self.layout.module_name(target) is None:
            return None  # not importable as a module of this project: no entry point imports it
        methods = {}
        for entry, method, line in self._entries():
            closure = self._imports_closure(entry)
            if entry != target and target in closure:
                methods.setdefault(method, (entry, line))
                self._consulted(entry, *closure)  # a cached result depends on them
        if not methods:
            return None
        if len(methods) > 1 or "unknown" in methods:
            return "unknown", "the entry points that import this module set different start methods"
        method, (entry, line) = next(iter(methods.items()))
        return method, f'set_start_method("{method}") in {display_path(entry)}:{line}, an entry point that imports it'

    def importers(self, path: Path) -> tuple[Place, ...]:
        """Where the project's other files import the module at `path` (each file's first import
        statement that names it), in path order; () when it is no module of the project. Read only
        when asked (a finding's message depends on it): every project file whose text names the
        module's last part is parsed with CPython's `ast`."""
        target = Path(os.path.abspath(path))
        module = self.layout.module_name(target)
        if module is None:
            return ()
        found = self._importers.get(target)
        if found is None:
            last = module.rpartition(".")[2]
            places = []
            for file in self._python_files():
                if file == target:
                    continue
                try:
                    text = file.read_text(encoding="utf-8", errors="replace")
                except OSError:
                    continue
                line = _import_line(text, file, target, self.layout) if last in text and "import" in text else None
                if line is not None:
                    places.append(Place(display_path(file), line))
            found = self._importers[target] = tuple(places)
        self._consulted(*(Path(place.path) for place in found))  # a cached result depends on them
        return found

    def _python_files(self) -> list[Path]:
        if self._files is None:
            files, _ = collect_files([str(self.layout.root)], self.config)
            self._files = sorted(Path(os.path.abspath(f.path)) for f in files[:MAX_SCANNED_FILES]
                                 if f.path.suffix == ".py")
        return self._files

    def _entries(self) -> list[tuple[Path, str, int]]:
        """(file, method, line) of the project's scripts (an `if __name__ == "__main__":` block) that
        call set_start_method with one literal method; "unknown" when it is not one literal."""
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
        # Whether a module acts at import depends on the modules it imports, each of which was
        # asked (and kept) too: a changed file no answer was kept for changes none of them, unless
        # files were created or removed (an import may find another file).
        touched = {Path(path) for path in changed}
        if moved or touched & self._acting.keys():
            self._acting.clear()
        if moved or any(path in touched or touched & closure for path, closure in self._closures.items()):
            self._closures.clear()
        if self._entry_points is not None:
            entries = [entry for entry in self._entry_points if str(entry[0]) not in changed]
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
                and not may_reach_tensorflow(text, path, self.layout):
            package = self.layout.package_of(path)
            exports = {name.rpartition(".")[2]: name for name in imported_names(text, package) if "." in name}
            return ModuleSummary(own_name, display, exports=exports, constants=_constants_in(text))
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

        constants = _constants(syntax_tree)
        if self._acts_at_import(path, syntax_tree) or _defines_state(syntax_tree, self.layout.package_of(path)):
            summary = analyse()
            return replace(summary, constants=constants) if summary is not None else None
        # Importing it runs no code that can start the runtime or fix the start method: only its
        # functions can matter, and LibCST reads the module when an importing module asks for one.
        package = self.layout.package_of(path)
        exports, stars, functions = _top_level_names(syntax_tree, package)
        return ModuleSummary(own_name, display, functions=_DeferredFunctions(functions, self, analyse, with_project),
                             exports=exports, star_exports=stars, constants=constants)

    # import-time behaviour, read with CPython's ast ------------------------------------------------------
    def _acts_at_import(self, path: Path, tree: ast.Module) -> bool:
        """Importing the module may run code that starts TensorFlow's runtime or fixes the start
        method: a module-level call (decorators, class bodies and default values included) of
        TensorFlow, Keras, multiprocessing, a project module, or code or a name of its own, or an
        import of a project module that may. Calls of other libraries and built-ins cannot (the
        analysis knows no more of them either)."""
        return self._import_time(path, tree)[0]

    def _import_time(self, path: Path, tree: ast.Module | None = None) -> tuple[bool, frozenset]:
        """(importing it may act, the names of the module whose call may act), cached."""
        key = Path(os.path.abspath(path))
        known = self._acting.get(key)
        if known is not None:
            return known
        if tree is None:
            try:
                tree = ast.parse(read_source(key))
            except (OSError, SyntaxError, ValueError, RecursionError):
                return True, frozenset()  # cannot tell: let the analysis read it
            self._consulted(key)
        self._acting[key] = (False, frozenset())  # an import cycle: the other module answers for itself
        self._acting[key] = result = self._module_acts(key, tree)
        return result

    def _module_acts(self, path: Path, tree: ast.Module) -> tuple[bool, frozenset]:
        package = self.layout.package_of(path)
        imports: dict[str, str] = {}  # local name -> the absolute name it is bound to
        acting: set[str] = set()  # names of the module whose call may act (its functions, globals)
        star = False
        definitions: dict[str, ast.AST] = {}
        for node in _import_time_nodes(tree.body):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                # Importing a project module runs its top level (and its packages' first).
                if any(self._imports_acting(module, path) for module in _modules_run(node, package)):
                    return True, frozenset()
                for name, bound in _imported(node, package):
                    if name is None:
                        star = True
                    else:
                        imports[name] = bound
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                definitions[node.name] = node
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.NamedExpr)):
                acting.update(n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))

        def acts(call: ast.Call) -> bool:
            dotted = _dotted(call.func)
            if not dotted:
                return False  # a method of a call's result (`f().update(...)`): the inner call is judged
            root = dotted.split(".")[0]
            if root in acting:
                return True
            if root in imports:
                return self._name_acts(".".join([imports[root], *dotted.split(".")[1:]]) if dotted
                                       else imports[root], path)
            return star and root not in _BUILTINS

        # A function or class of the module acts when its code calls something that acts (until no
        # more are found); a global assigned from something that acts may act.
        changed = True
        while changed:
            changed = False
            for node in _import_time_nodes(tree.body):
                if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None:
                    if any(isinstance(n, ast.Call) and acts(n) for n in ast.walk(node.value)) or (
                            _root_name(node.value) in acting):
                        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                        found = {n.id for target in targets for n in ast.walk(target) if isinstance(n, ast.Name)}
                        changed |= not found <= acting
                        acting |= found
            for name, node in definitions.items():
                if name not in acting and any(isinstance(n, ast.Call) and acts(n) for n in ast.walk(node)):
                    acting.add(name)
                    changed = True
        result = any(isinstance(node, ast.Call) and acts(node) for node in _import_time_nodes(tree.body))
        return result, frozenset(acting | ({"*"} if star else set()))

    def _name_acts(self, qualified: str, importer: Path) -> bool:
        """Calling `qualified` at import may start the runtime or fix the start method."""
        top = qualified.split(".")[0]
        last = qualified.rsplit(".", 1)[-1]
        if top in _TENSORFLOW_PACKAGES:
            return last not in tensorflow.IMPORT_TIME_INERT
        if top in _PROCESS_PACKAGES:
            name = canonical(qualified)
            return name in processes.CONTEXT_FIXING_CALLS or name in _FIXING or name in processes.PROCESS_CONSTRUCTORS
        return self._project_name_acts(qualified, importer)

    def _project_name_acts(self, qualified: str, importer: Path) -> bool:
        """Calling `qualified` (a module of the project, or a name in one) may act: the name is one
        of that module's acting names (or the module could not be read)."""
        module, _, name = qualified.rpartition(".")
        if self.layout.module_path(qualified, importer) is not None:
            return True  # a module used as a value (`from pkg import models; models.build()`)
        target = self.layout.module_path(module, importer) if module else None
        if target is None:
            return False  # not the project's
        names = self._import_time(target)[1]
        return name in names or "*" in names

    def _imports_acting(self, module: str, importer: Path) -> bool:
        target = self.layout.module_path(module, importer)
        return target is not None and self._import_time(target)[0]


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


def _entry_point(path: Path) -> tuple[Path, str, int] | None:
    """(file, method, line) if the file at `path` is a script that calls set_start_method."""
    try:
        text = read_source(path).decode("utf-8", errors="replace")
    except OSError:
        return None
    if "set_start_method" not in text or "__main__" not in text:
        return None
    literals = {match.group(2) for match in _SET_START_METHOD.finditer(text)}
    line = text.count("\n", 0, text.find("set_start_method")) + 1
    method = literals.pop() if len(literals) == 1 and literals <= {"fork", "spawn", "forkserver"} else "unknown"
    return path, method, line


def forget_files(paths, layout: bool = True) -> None:
    """Files at these absolute paths changed: every project kept in this process forgets what it
    worked out from them (`Project.forget`); with `layout` (they may have been created or removed),
    module lookups start afresh too."""
    from tfproc_lint.project_layout import clear_caches

    if layout:
        clear_caches()
    for project in list(_PROJECTS.values()):
        project.forget(paths, moved=layout)


_TENSORFLOW_PACKAGES = frozenset(packages.RUNTIME_PACKAGES)
_PROCESS_PACKAGES = frozenset({"multiprocessing", "multiprocess", "billiard", "concurrent", "joblib", "loky", "pathos",
                               "torch"})
_FIXING = frozenset({processes.SET_START_METHOD, processes.GET_CONTEXT, processes.GET_START_METHOD})
_BUILTINS = frozenset(dir(builtins))


_NUMBER_ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*\s*(?::[^=\n]*)?=\s*[-+]?[\d.]", re.MULTILINE)


def _import_line(text: str, importer: Path, target: Path, layout: Layout) -> int | None:
    """The line of the first import statement in `text` (the file `importer`) that runs the module
    file `target` (`import a.b` runs `a` and `a.b`), or None."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None
    package = layout.package_of(importer)
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = absolute_module(node.level, node.module or "", package)
            names = [module, *(f"{module}.{alias.name}" for alias in node.names)] if module else []
        else:
            continue
        for name in names:
            parts = name.split(".")
            for cut in range(len(parts), 0, -1):
                found = layout.module_path(".".join(parts[:cut]), importer)
                if found is not None and Path(os.path.abspath(found)) == target:
                    lines.append(node.lineno)
    return min(lines, default=None)


def _constants_in(text: str) -> dict[str, float]:
    """`_constants` of a module's text, parsed only when a line looks like `NAME = <number>`."""
    if not _NUMBER_ASSIGNMENT.search(text):
        return {}
    try:
        return _constants(ast.parse(text))
    except (SyntaxError, ValueError, RecursionError):
        return {}


def _constants(tree: ast.Module) -> dict[str, float]:
    """Module-level names bound exactly once, at the top level, to a literal number (or `a / b` of
    two): what a `num_gpus=config.GPU_SHARE` elsewhere reads."""
    found: dict[str, float] = {}
    bound: dict[str, int] = {}
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
            if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
        for target in targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name):
                    bound[name.id] = bound.get(name.id, 0) + 1
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = _number(node.value)
            if value is not None and len(targets) == 1 and isinstance(targets[0], ast.Name):
                found[targets[0].id] = value
    return {name: value for name, value in found.items() if bound.get(name) == 1}


def _number(node) -> float | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        left, right = _number(node.left), _number(node.right)
        if left is not None and right:
            return left / right
    return None


def _defines_state(tree: ast.Module, package: str | None) -> bool:
    """A module-level name may hold TensorFlow state made without starting the runtime (a
    `tf.function`, a graph): an assignment from a call, or a decorated function, that names
    TensorFlow or Keras. Importing the module does not act, but its summary's state must be read."""
    packages = {name for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))
                for name, bound in _imported(node, package) if name is not None
                and bound.split(".")[0] in _TENSORFLOW_PACKAGES}
    if not packages:
        return False
    for node in _import_time_nodes(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            roots = {_root_name(decorator) for decorator in node.decorator_list}
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Call):
            roots = {_root_name(node.value)}
        else:
            continue
        if roots & packages:
            return True
    return False


def _import_time_nodes(statements):
    """The nodes of a module that run when it is imported: not the bodies of functions and lambdas
    (their decorators, defaults and a class's body do run)."""
    pending = list(statements)
    while pending:
        node = pending.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            pending.extend(node.decorator_list)
            pending.extend(d for d in (*node.args.defaults, *node.args.kw_defaults) if d is not None)
        elif isinstance(node, ast.Lambda):
            pending.extend(d for d in (*node.args.defaults, *node.args.kw_defaults) if d is not None)
        else:
            pending.extend(ast.iter_child_nodes(node))


def _imported(node, package: str | None):
    """(local name or None for `*`, absolute module or name) for each name an import binds."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield (alias.asname or alias.name.split(".")[0]), (alias.name if alias.asname else alias.name.split(".")[0])
        return
    base = absolute_module(node.level, node.module or "", package)
    if base is None:
        return
    for alias in node.names:
        if alias.name == "*":
            yield None, base
        else:
            yield (alias.asname or alias.name), f"{base}.{alias.name}" if base else alias.name


def _modules_run(node, package: str | None) -> list[str]:
    """The modules an import statement runs (`import a.b`: a, a.b; `from a import b`: a, a.b)."""
    names = []
    for name, bound in _imported(node, package):
        if isinstance(node, ast.Import):
            name = next(alias.name for alias in node.names if (alias.asname or alias.name.split(".")[0]) == name)
            bound = name
        else:
            bound = bound if name is not None else bound
        parts = bound.split(".")
        names += [".".join(parts[:cut]) for cut in range(1, len(parts) + 1)]
    return list(dict.fromkeys(names))


def _dotted(node) -> str:
    """`a.b.c` -> "a.b.c"; otherwise ""."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else ""


def _root_name(node) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _top_level_names(tree: ast.Module, package: str | None):
    """(exports, star imports, function names) as the summary names them: imported names with
    their absolute names, `from m import *` modules, and `f` / `Class.method` defined at the top."""
    exports: dict[str, str] = {}
    stars: list[str] = []
    functions: set[str] = set()
    pending = list(tree.body)
    while pending:
        node = pending.pop(0)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for name, bound in _imported(node, package):
                if name is None:
                    stars.append(bound)
                elif bound:
                    exports[name] = bound
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.add(node.name)
            exports.pop(node.name, None)
        elif isinstance(node, ast.ClassDef):
            exports.pop(node.name, None)
            functions.update(f"{node.name}.{item.name}" for item in node.body
                             if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)))
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            pending[0:0] = [*node.body, *getattr(node, "orelse", []), *getattr(node, "finalbody", []),
                            *(item for handler in getattr(node, "handlers", []) for item in handler.body)]
    return exports, tuple(stars), functions


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
