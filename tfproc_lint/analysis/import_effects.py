"""What importing a project module may do, read cheaply with CPython's `ast` (no LibCST).

The project layer (tfproc_lint/project.py) asks this before it analyses a module with LibCST: a
module whose import runs nothing that can start TensorFlow's runtime or fix the start method, and
whose globals hold no TensorFlow state, is summarised from its names alone, and its functions are
analysed only when an importing module asks for one.

`ImportEffects` judges each module once (per project, until `forget`), following the project
modules it imports and calls at import; `ImportTimeEffects` is its record of one module.
"""

from __future__ import annotations

import ast
import builtins
import os
from collections import deque
from collections.abc import Callable, Iterable
from pathlib import Path

from tfproc_lint.analysis.names import canonical
from tfproc_lint.knowledge import packages, processes, tensorflow
from tfproc_lint.project_layout import Layout, absolute_module
from tfproc_lint.records import record

TENSORFLOW_PACKAGES = frozenset(packages.RUNTIME_PACKAGES)
PROCESS_PACKAGES = frozenset(packages.PROCESS_ROOTS)
_FIXING = frozenset({processes.SET_START_METHOD, processes.GET_CONTEXT, processes.GET_START_METHOD})
_BUILTINS = frozenset(dir(builtins))


@record
class ImportTimeEffects:
    """One module's import, as far as `ast` tells: whether it may act, and which of its names may
    act when another module calls them at its own import. (A record that can grow: the effects of
    each function are the next step's.)"""

    acts: bool  # importing it may start TensorFlow's runtime or fix the start method
    acting_names: frozenset[str] = frozenset()  # its functions, classes and globals whose call may act
    star_import: bool = False  # it has `from m import *`: any name it has may be one that acts

    def name_acts(self, name: str) -> bool:
        return name in self.acting_names or self.star_import


UNKNOWN = ImportTimeEffects(acts=True)  # the module could not be read: let the analysis read it
_IN_PROGRESS = ImportTimeEffects(acts=False)  # an import cycle: the other module answers for itself


class ImportEffects:
    """Which modules of a project act at import, worked out once each. `read_tree(path)` gives a
    module file's syntax tree (None: unreadable), recording what it read as the caller needs."""

    def __init__(self, layout: Layout, read_tree: Callable[[Path], ast.Module | None]) -> None:
        self.layout = layout
        self._read_tree = read_tree
        self._known: dict[Path, ImportTimeEffects] = {}

    def acts_at_import(self, path: Path, tree: ast.Module) -> bool:
        """Importing the module may run code that starts TensorFlow's runtime or fixes the start
        method: a module-level call (decorators, class bodies and default values included) of
        TensorFlow, Keras, multiprocessing, a project module, or code or a name of its own, or an
        import of a project module that may. Calls of other libraries and built-ins cannot (the
        analysis knows no more of them either)."""
        return self.of(path, tree).acts

    def of(self, path: Path, tree: ast.Module | None = None) -> ImportTimeEffects:
        """The module at `path` (its `tree`, or read when not given), cached."""
        key = Path(os.path.abspath(path))
        known = self._known.get(key)
        if known is not None:
            return known
        if tree is None:
            tree = self._read_tree(key)
            if tree is None:
                return UNKNOWN
        self._known[key] = _IN_PROGRESS
        self._known[key] = effects = self._module_effects(key, tree)
        return effects

    def forget(self, touched: set[Path], moved: bool) -> None:
        """Files changed: the answers depend on the modules each import reaches, all of which were
        asked (and kept) too, so only a changed file that was asked about changes them, unless files
        were created or removed (`moved`: an import may find another file)."""
        if moved or touched & self._known.keys():
            self._known.clear()

    def _module_effects(self, path: Path, tree: ast.Module) -> ImportTimeEffects:
        package = self.layout.package_of(path)
        imports: dict[str, str] = {}  # local name -> the absolute name it is bound to
        acting: set[str] = set()  # names of the module whose call may act (its functions, globals)
        star = False
        definitions: dict[str, ast.AST] = {}
        nodes = list(import_time_nodes(tree.body))  # walked once: the loop below goes over them again
        for node in nodes:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                # Importing a project module runs its top level (and its packages' first).
                if any(self._imports_acting(module, path) for module in modules_run(node, package)):
                    return ImportTimeEffects(acts=True)
                for name, bound in imported_bindings(node, package):
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
        # more are found); a global assigned from something that acts may act. The calls of each are
        # collected once, in the order `ast.walk` meets them, and asked in that order every round.
        assignments = [(node, _calls_in(node.value)) for node in nodes
                       if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None]
        definition_calls = {name: _calls_in(node) for name, node in definitions.items()}
        changed = True
        while changed:
            changed = False
            for node, calls in assignments:
                if any(acts(n) for n in calls) or root_name(node.value) in acting:
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    found = {n.id for target in targets for n in ast.walk(target) if isinstance(n, ast.Name)}
                    changed |= not found <= acting
                    acting |= found
            for name, calls in definition_calls.items():
                if name not in acting and any(acts(n) for n in calls):
                    acting.add(name)
                    changed = True
        result = any(isinstance(node, ast.Call) and acts(node) for node in nodes)
        return ImportTimeEffects(result, frozenset(acting), star)

    def _name_acts(self, qualified: str, importer: Path) -> bool:
        """Calling `qualified` at import may start the runtime or fix the start method."""
        top = qualified.split(".")[0]
        last = qualified.rsplit(".", 1)[-1]
        if top in TENSORFLOW_PACKAGES:
            return last not in tensorflow.IMPORT_TIME_INERT
        if top in PROCESS_PACKAGES:
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
        return self.of(target).name_acts(name)

    def _imports_acting(self, module: str, importer: Path) -> bool:
        target = self.layout.module_path(module, importer)
        return target is not None and self.of(target).acts


def _calls_in(node: ast.AST) -> list[ast.Call]:
    """The calls under `node`, in `ast.walk`'s order (breadth first, fields in order), without its
    generators: a large project's import-time check walks every function of every module it reaches."""
    calls = []
    pending = deque([node])
    while pending:
        current = pending.popleft()
        for name in current._fields:
            value = getattr(current, name, None)
            if isinstance(value, ast.AST):
                pending.append(value)
            elif isinstance(value, list):
                pending.extend(item for item in value if isinstance(item, ast.AST))
        if isinstance(current, ast.Call):
            calls.append(current)
    return calls


def defines_state(tree: ast.Module, package: str | None) -> bool:
    """A module-level name may hold TensorFlow state made without starting the runtime (a
    `tf.function`, a graph): an assignment from a call, or a decorated function, that names
    TensorFlow or Keras. Importing the module does not act, but its summary's state must be read."""
    packages = {name for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))
                for name, bound in imported_bindings(node, package) if name is not None
                and bound.split(".")[0] in TENSORFLOW_PACKAGES}
    if not packages:
        return False
    for node in import_time_nodes(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            roots = {root_name(decorator) for decorator in node.decorator_list}
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Call):
            roots = {root_name(node.value)}
        else:
            continue
        if roots & packages:
            return True
    return False


def import_time_nodes(statements: Iterable[ast.stmt]):
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


def imported_bindings(node: ast.Import | ast.ImportFrom, package: str | None):
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


def modules_run(node: ast.Import | ast.ImportFrom, package: str | None) -> list[str]:
    """The modules an import statement runs (`import a.b`: a, a.b; `from a import b`: a, a.b)."""
    names = []
    for name, bound in imported_bindings(node, package):
        if isinstance(node, ast.Import):
            name = next(alias.name for alias in node.names if (alias.asname or alias.name.split(".")[0]) == name)
            bound = name
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


def root_name(node) -> str | None:
    """The name an expression starts from (`tf` of `tf.keras.Model(...).fit`), or None."""
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None
