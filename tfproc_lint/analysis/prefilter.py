"""Cheap text checks that skip files no rule can match, before LibCST parses anything.

Every finding needs, in one file: TensorFlow or Keras, a process module, and something that makes
a process pool, executor, process, queue or pipe (a call, a subclass, or an aliased import of one);
or TensorFlow or Keras and a setting the runtime reads once when it starts (TFP402, TFP403: a
`tf.config` call or an environment variable, which go wrong in a single process too).
Substring tests reject most files; two regular expressions confirm the rest. A file that passes
only for a runtime setting gets a second look on CPython's syntax tree (`may_match_tree`, which the
engine runs on the tree its parse guard builds anyway): the setting must resolve through the
module's imports, as the analysis resolves it. TensorFlow's own sources configure TensorFlow
through its internal modules, which no rule reports; without this second look they made up most of
the LibCST parses in the speed benchmark. The checks only ever let too much through, never too
little (tests/test_prefilter.py). Kept free of libcst so that the flake8 plugin can import it
cheaply.
"""

from __future__ import annotations

import ast
import os
import re

from tfproc_lint.analysis.names import canonical
from tfproc_lint.knowledge import engines as engine_knowledge
from tfproc_lint.knowledge import environment, packages
from tfproc_lint.knowledge.tensorflow import RUNTIME_CONFIGURATION
from tfproc_lint.project_layout import MAX_SETTING_IMPORT_DEPTH, layout_for, project_imports

# Substring groups, rarest first: `in` is the fastest test Python has. "multiprocess" also covers
# `use_multiprocessing=True` (Keras data workers: the analysis takes only the literal True, so
# Keras's own `use_multiprocessing=use_multiprocessing` is not a candidate), "fork" covers `os.fork()`.
_GROUPS = (("multiprocess", "concurrent", "billiard", "joblib", "loky", "pathos", "fork"), packages.TENSORFLOW_MARKERS,
           ("Pool", "Process", "Queue", "Pipe", "get_context", "fork", "Parallel", "executor", "multiprocessing"))
_BYTE_GROUPS = tuple(tuple(marker.encode() for marker in group) for group in _GROUPS)
# The settings the runtime reads once: RUNTIME_CONFIGURATION's setters (set_memory_growth,
# ...) and environment.RUNTIME_ENVIRONMENT's variables.
_SETTERS = frozenset(name.rsplit(".", 1)[1] for name in RUNTIME_CONFIGURATION)
_VARIABLES = tuple(environment.RUNTIME_ENVIRONMENT)
_SETTINGS = packages.markers((*sorted(_SETTERS), *_VARIABLES))
_BYTE_SETTINGS = tuple(marker.encode() for marker in _SETTINGS)
# Distributed engines (engine_knowledge.ENGINE_PACKAGES): TensorFlow and an import of one is enough.
_ENGINES = tuple(engine_knowledge.ENGINE_PACKAGES)
_BYTE_ENGINES = tuple(marker.encode() for marker in _ENGINES)
# An import statement of one, at the start of a line (after whitespace): `^\s*` with re.MULTILINE
# made `re` try every position; `_starts_a_line` checks it instead (the same decisions, tested).
_ENGINE_IMPORT = re.compile(rf"(?:import|from)\s+(?:{'|'.join(_ENGINES)})\b")
# Confirmed by a `tf.config` setter's name (called, aliased or imported), or a runtime variable and
# `os.environ`/`putenv` anywhere in the file; `may_match_tree` then looks at how they resolve.
# The patterns that must start a word have no leading `\b`, and `re` does not search for them: each
# match starts with one of the keywords beside it (after an optional `_`), which str.find finds
# much faster; `_at_word_start` checks the boundary (the same decisions as the `\b` patterns:
# tests/test_prefilter.py compares them on TensorFlow's sources).
_SETTER = re.compile(rf"(?:{'|'.join(sorted(_SETTERS))})\b")
_SETTER_KEYWORDS = tuple(sorted(_SETTERS))
_PROCESS_MODULE_WORD = re.compile(
    r"(?:multiprocess(?:ing)?|concurrent\.futures|billiard|joblib|loky|pathos)\b"
    r"|fork\s*\(|use_multiprocessing\s*=\s*True\b"
)
_PROCESS_MODULE_KEYWORDS = ("multiprocess", "concurrent", "billiard", "joblib", "loky", "pathos", "fork",
                            "use_multiprocessing")
_FROM_CONCURRENT = re.compile(r"from\s+concurrent\s+import")
_MAKER = re.compile(
    r"_?(?:Pool|(?:Fork|Spawn|ForkServer)?Process|ProcessPoolExecutor|Queue|SimpleQueue|JoinableQueue|Pipe|Manager"
    r"|SyncManager|get_context"
    r"|Parallel|ProcessingPool|ProcessPool|get_reusable_executor|fork)(?:\s*[(),]|\s+as\b)"
    r"|use_multiprocessing\s*=\s*True\b"
)
_CALLS_START = re.compile(r"\.start\(\s*\)")
_PROCESS_SUBCLASS = re.compile(r"^[ \t]*class\s+\w+\s*\([^)]*?\b(?:Fork|Spawn|ForkServer)?Process\s*[,)]", re.M)
_MAKER_KEYWORDS = ("Pool", "Process", "Fork", "Spawn", "Queue", "SimpleQueue", "JoinableQueue", "Pipe", "Manager",
                   "SyncManager", "get_context", "Parallel", "get_reusable_executor", "fork", "use_multiprocessing")


def _starts_a_line(pattern: re.Pattern, text: str | bytes, keywords: tuple) -> bool:
    r"""`pattern`, whose matches start with one of `keywords`, matches after nothing but whitespace
    on its line: what `^\s*` + pattern finds with re.MULTILINE (`\s` and str.isspace are the same
    characters; for bytes, ASCII text without \x1c-\x1f). The keywords are found with str.find,
    much faster than `re`'s search here."""
    newline = "\n" if isinstance(text, str) else b"\n"
    for keyword in keywords:
        start = text.find(keyword)
        while start != -1:
            if pattern.match(text, start) is not None:
                line_start = text.rfind(newline, 0, start) + 1
                if line_start == start or text[line_start:start].isspace():
                    return True
            start = text.find(keyword, start + 1)
    return False


def _at_word_start(pattern: re.Pattern, text: str, keywords: tuple[str, ...]) -> bool:
    """`pattern`, each of whose matches starts with one of `keywords` (after an optional `_`),
    matches where a word starts: what `\b` + pattern finds with `re.search`."""
    for keyword in keywords:
        found = text.find(keyword)
        while found != -1:
            starts = (found - 1, found) if found and text[found - 1] == "_" else (found,)
            for start in starts:
                if (not start or not _is_word_character(text[start - 1])) and pattern.match(text, start):
                    return True
            found = text.find(keyword, found + 1)
    return False


def _is_word_character(character: str) -> bool:
    return character.isalnum() or character == "_"  # `\w`, as `re` has it


def may_match(source: str) -> bool:
    tensorflow = any(marker in source for marker in _GROUPS[1])
    if tensorflow and any(marker in source for marker in _SETTINGS) and _names_a_setting(source):
        return True
    return tensorflow and (_makes_processes(source) or _imports_engine(source))


def may_start_processes(source: str) -> bool:
    """Short of TensorFlow: the text makes processes, imports an engine or names a runtime
    setting (a file that may need another module of its project to be understood)."""
    return _makes_processes(source) or _imports_engine(source) or (
        any(marker in source for marker in _SETTINGS) and _names_a_setting(source))


def may_start_processes_bytes(data: bytes) -> bool:
    """`may_start_processes` on bytes, by substrings only (it lets more through)."""
    return (all(any(marker in data for marker in group) for group in (_BYTE_GROUPS[0], _BYTE_GROUPS[2]))
            or any(marker in data for marker in _BYTE_SETTINGS) or any(marker in data for marker in _BYTE_ENGINES))


def may_need_project(source: str, path, config) -> bool:
    """A file the checks above stop (its text names no TensorFlow) that makes processes, imports an
    engine or names a runtime setting, and imports a module of its project that may run TensorFlow
    (directly or through other project modules): it must reach the analysis, which reads them."""
    return project_verdict(source, path, config) is True


def project_verdict(source: str, path, config) -> bool | None:
    """`may_need_project`, and whether the answer depends on other files: None when it does not
    (project analysis off, the text names TensorFlow, no project, or no import of a project module),
    else True or False. A file that makes no processes needs a project module it imports to name
    a runtime setting (a helper it may call after the runtime started)."""
    if not getattr(config, "project_analysis", False) or any(marker in source for marker in _GROUPS[1]):
        return None  # a file that names TensorFlow itself was judged by `may_match` on its own text
    processes = may_start_processes(source)
    if not processes and "import" not in source:
        return None
    layout = layout_for(path, config.src)
    if layout is None or not os.path.isfile(path):
        return None
    if processes or starts_project_process(source, path, layout):
        return project_imports(source, path, layout)
    # A file that calls a helper of another module which makes a runtime setting (TFP402, TFP403):
    # one of the project modules it imports names one.
    return project_imports(source, path, layout, names=names_a_setting, max_depth=MAX_SETTING_IMPORT_DEPTH)


def starts_project_process(source: str, path, layout) -> bool:
    """The text starts an object (`.start()`) and imports a project module that defines a `Process`
    subclass: a worker process made of another module's class, which the text alone does not show."""
    return _CALLS_START.search(source) is not None and bool(
        project_imports(source, path, layout, names=defines_process_class, max_depth=1))


def defines_process_class(source: str) -> bool:
    return _PROCESS_SUBCLASS.search(source) is not None


def _imports_engine(source: str) -> bool:
    return any(marker in source for marker in _ENGINES) and _starts_a_line(_ENGINE_IMPORT, source, ("import", "from"))


def names_a_setting(source: str) -> bool:
    """The text names a `tf.config` setter, or a runtime variable and `os.environ`/`putenv`."""
    return any(marker in source for marker in _SETTINGS) and _names_a_setting(source)


def _names_a_setting(source: str) -> bool:
    return _at_word_start(_SETTER, source, _SETTER_KEYWORDS) or (
        any(variable in source for variable in _VARIABLES) and ("environ" in source or "putenv" in source))


def _makes_processes(source: str) -> bool:
    return (
        all(any(marker in source for marker in group) for group in (_GROUPS[0], _GROUPS[2]))
        and (_at_word_start(_PROCESS_MODULE_WORD, source, _PROCESS_MODULE_KEYWORDS)
             or _FROM_CONCURRENT.search(source) is not None)
        and _at_word_start(_MAKER, source, _MAKER_KEYWORDS)
    )


# second stage: CPython's syntax tree ----------------------------------------------------------------
_ENVIRONMENT_ENTRIES = frozenset(name.rsplit(".", 1)[1] for name in (environment.ENVIRON, environment.PUTENV))
_MAX_ALIAS_DEPTH = 8  # the analysis follows aliases to values.MAX_DEPTH (6)


def may_match_tree(source: str, tree: ast.Module) -> bool:
    """`may_match` again, given the module's syntax tree: a file that passed only for a runtime
    setting goes on only if a `tf.config` setter, or `os.environ`/`os.putenv` with one of the
    runtime's variables, can resolve through imports and plain aliases (`setter = tf.config...`).
    A name resolves in the scope the analysis's symbol table resolves it in (`_Scopes`), through
    every binding there, whatever their order, so this lets through at least what the analysis
    resolves; every import's own name counts too (`from ... import set_memory_growth as grow`)."""
    if _makes_processes(source) or _imports_engine(source):
        return True
    scopes = _Scopes(tree)
    resolved = {canonical(name) for name in scopes.imported}
    for node, scope in scopes.spelled:
        resolved.update(scopes.resolve(node, scope, 0))
    if not resolved.isdisjoint(RUNTIME_CONFIGURATION):
        return True
    # `os.environ` counts only where it is written, as settings.environment_settings reads it:
    # `environ[KEY] = ...`, `environ.update(...)` / `setdefault` / `__setitem__`; reads never matter.
    writes = environment.PUTENV in resolved or any(
        environment.ENVIRON in scopes.resolve(node, scope, 0) for node, scope in scopes.environ_writes)
    return writes and _names_a_runtime_variable(tree)


class _Scope:
    __slots__ = ("kind", "parent", "bindings", "declared")

    def __init__(self, kind: str, parent: "_Scope | None") -> None:
        self.kind = kind
        self.parent = parent
        self.bindings: dict[str, list] = {}  # name -> entries: a qualified name, (expression, scope), or None
        self.declared: set[str] = set()  # `global` / `nonlocal` names


class _Scopes:
    """Scopes and bindings of a module's syntax tree as symbols.SymbolTable records them on LibCST's
    tree (the same binding statements, the same scope for each, decorators and defaults outside the
    function, a comprehension's first iterable outside it), for the spellings of settings only.
    An entry that the analysis could not follow (a parameter, a loop variable) is None: it still
    decides which scope a name resolves in."""

    def __init__(self, tree: ast.Module) -> None:
        self.module = _Scope("module", None)
        self.spelled: list[tuple[ast.expr, _Scope]] = []  # Names and Attributes spelling a setter or environ
        self.imported: list[str] = []  # every import's qualified name
        self.environ_writes: list[tuple[ast.expr, _Scope]] = []  # `X[k] = v` and `X.update(...)`: is X environ?
        for statement in tree.body:
            self.visit(statement, self.module)

    # resolution -------------------------------------------------------------------------------------
    def resolve(self, node: ast.expr, scope: _Scope, depth: int) -> set[str]:
        if depth > _MAX_ALIAS_DEPTH:
            return set()
        if isinstance(node, ast.Attribute):
            return {canonical(f"{head}.{node.attr}") for head in self.resolve(node.value, scope, depth + 1)}
        if not isinstance(node, ast.Name):
            return set()
        found = set()
        for entry in _candidates(node.id, scope):
            if isinstance(entry, str):
                found.add(canonical(entry))
            elif entry is not None:
                found.update(self.resolve(entry[0], entry[1], depth + 1))
        return found

    # collection -------------------------------------------------------------------------------------
    def bind(self, name: str, scope: _Scope, entry) -> None:
        scope.bindings.setdefault(name, []).append(entry)
        if name in scope.declared:  # `global x` / `nonlocal x`: the binding lands outside too
            outer = scope.parent
            while outer is not None and outer.parent is not None and outer.kind != "function":
                outer = outer.parent
            for target in {id(s): s for s in (outer, self.module) if s is not None}.values():
                target.bindings.setdefault(name, []).append(entry)

    def bind_target(self, target: ast.expr, scope: _Scope, value: ast.expr | None) -> None:
        if isinstance(target, ast.Name):
            alias = (value, scope) if isinstance(value, (ast.Name, ast.Attribute)) else None
            self.bind(target.id, scope, alias)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self.bind_target(element, scope, None)
        elif isinstance(target, ast.Starred):
            self.bind_target(target.value, scope, None)

    def visit_all(self, nodes, scope: _Scope) -> None:
        for node in nodes:
            if node is not None:
                self.visit(node, scope)

    def visit(self, node: ast.AST, scope: _Scope) -> None:  # noqa: C901 - one branch per binding construct
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            arguments = node.args
            if not isinstance(node, ast.Lambda):
                self.visit_all(node.decorator_list, scope)
                self.visit_all([a.annotation for a in _parameters(arguments)] + [node.returns], scope)
            self.visit_all(arguments.defaults + arguments.kw_defaults, scope)
            if not isinstance(node, ast.Lambda):
                self.bind(node.name, scope, None)
            inner = _Scope("lambda" if isinstance(node, ast.Lambda) else "function", scope)
            for parameter in _parameters(arguments):
                self.bind(parameter.arg, inner, None)
            self.visit_all(node.body if isinstance(node.body, list) else [node.body], inner)
        elif isinstance(node, ast.ClassDef):
            self.visit_all(node.decorator_list + node.bases + [k.value for k in node.keywords], scope)
            self.bind(node.name, scope, None)
            inner = _Scope("class", scope)
            self.visit_all(node.body, inner)
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            self.visit(node.generators[0].iter, scope)
            inner = _Scope("comprehension", scope)
            for number, generator in enumerate(node.generators):
                if number:
                    self.visit(generator.iter, inner)
                self.bind_target(generator.target, inner, None)
                self.visit_all(generator.ifs, inner)
            parts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            self.visit_all(parts, inner)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                self.imported.append(alias.name)
                if alias.asname:
                    self.bind(alias.asname, scope, alias.name)
                else:
                    head = alias.name.split(".")[0]
                    self.bind(head, scope, head)
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name == "*":
                    continue
                qualified = f"{node.module}.{alias.name}" if node.level == 0 and node.module else None
                if qualified:
                    self.imported.append(qualified)
                self.bind(alias.asname or alias.name, scope, qualified)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            scope.declared.update(node.names)
        elif isinstance(node, ast.Assign):
            self.visit(node.value, scope)
            for target in node.targets:
                self.visit(target, scope)
                self.bind_target(target, scope, node.value if isinstance(target, ast.Name) else None)
                if isinstance(target, ast.Subscript):
                    self.environ_writes.append((target.value, scope))
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
            self.visit_all([node.target, getattr(node, "annotation", None), node.value], scope)
            if node.value is not None:
                self.bind_target(node.target, scope, None if isinstance(node, ast.AugAssign) else node.value)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            self.visit(node.iter, scope)
            self.bind_target(node.target, scope, None)
            self.visit_all([node.target, *node.body, *node.orelse], scope)
        elif isinstance(node, ast.withitem):
            self.visit(node.context_expr, scope)
            if node.optional_vars is not None:
                self.bind_target(node.optional_vars, scope, None)
                self.visit(node.optional_vars, scope)
        elif isinstance(node, ast.ExceptHandler):
            self.visit_all([node.type], scope)
            if node.name:
                self.bind(node.name, scope, None)
            self.visit_all(node.body, scope)
        else:
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in environment.ENVIRON_SETTERS:
                self.environ_writes.append((node.func.value, scope))
            elif isinstance(node, ast.Attribute):
                if node.attr in _SETTERS or node.attr in _ENVIRONMENT_ENTRIES:
                    self.spelled.append((node, scope))
            elif isinstance(node, ast.Name):
                if node.id in _SETTERS or node.id in _ENVIRONMENT_ENTRIES:
                    self.spelled.append((node, scope))
            for child in ast.iter_child_nodes(node):
                self.visit(child, scope)


def _parameters(arguments: ast.arguments) -> list[ast.arg]:
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    return every + [extra for extra in (arguments.vararg, arguments.kwarg) if extra is not None]


def _candidates(name: str, scope: _Scope) -> list:
    """The bindings a use of `name` in `scope` may see: those of the scope it resolves in
    (symbols.SymbolTable.resolving_scope: the innermost that binds it, class bodies skipped from
    nested functions), with every scope above a `global`/`nonlocal` declaration."""
    found: list = []
    first = True
    current: _Scope | None = scope
    while current is not None:
        if (first or current.kind != "class") and name in current.bindings:
            found.extend(current.bindings[name])
            if name not in current.declared:
                return found
        first = False
        current = current.parent
    return found


def _names_a_runtime_variable(tree: ast.Module) -> bool:
    """A string constant or keyword argument that is one of environment.RUNTIME_ENVIRONMENT's names."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and node.value in environment.RUNTIME_ENVIRONMENT \
                or isinstance(node, ast.keyword) and node.arg in environment.RUNTIME_ENVIRONMENT:
            return True
    return False


def may_match_bytes(data: bytes, notebook: bool = False) -> bool:
    """The substring part of `may_match` on undecoded bytes (Python source is ASCII-compatible),
    so that most files are never decoded. A notebook's bytes are its JSON (cells' lines in quotes,
    escapes): for it the engine import is only a substring test."""
    if not any(marker in data for marker in _BYTE_GROUPS[1]):
        return False
    return any(marker in data for marker in _BYTE_SETTINGS) or all(
        any(marker in data for marker in group) for group in (_BYTE_GROUPS[0], _BYTE_GROUPS[2])
    ) or _may_import_engine(data, notebook)


# `_ENGINE_IMPORT` on bytes: for an ASCII file (without the separators \x1c-\x1f, which str.isspace
# counts as whitespace and bytes patterns do not) every decoding gives the same characters, so the
# text stage's check decides as it will; "ray" alone is in every "array".
_BYTE_ENGINE_IMPORT = re.compile(_ENGINE_IMPORT.pattern.encode())
_BYTE_SEPARATORS = (b"\x1c", b"\x1d", b"\x1e", b"\x1f")


def _may_import_engine(data: bytes, notebook: bool) -> bool:
    if not any(marker in data for marker in _BYTE_ENGINES):
        return False
    if notebook or not data.isascii() or any(separator in data for separator in _BYTE_SEPARATORS):
        return True
    return _starts_a_line(_BYTE_ENGINE_IMPORT, data, (b"import", b"from"))
