"""A module's names and number constants, read with CPython's `ast` or its text (no LibCST): what
the project layer's summary of a module holds when importing the module runs nothing that matters
(tfproc_lint/project.py), its functions' facts left for when an importing module asks."""

from __future__ import annotations

import ast
import re

from tfproc_lint.analysis.import_effects import imported_bindings
from tfproc_lint.project_layout import imported_names
from tfproc_lint.records import record

_NUMBER_ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*\s*(?::[^=\n]*)?=\s*[-+]?[\d.]", re.MULTILINE)


@record
class ModuleOutline:
    """The names a module's top level defines and re-exports, as its summary names them."""

    exports: dict[str, str]  # imported name -> its absolute name
    star_exports: tuple[str, ...]  # modules of its `from m import *`
    functions: frozenset[str]  # `f` and `Class.method` defined at the top, `Class.__init__` for each class


def outline(tree: ast.Module, package: str | None) -> ModuleOutline:
    """The outline of a module (`tree`) of `package` (for its relative imports)."""
    exports: dict[str, str] = {}
    stars: list[str] = []
    functions: set[str] = set()
    classes: dict[str, ast.ClassDef] = {}
    pending = list(tree.body)
    while pending:
        node = pending.pop(0)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for name, bound in imported_bindings(node, package):
                if name is None:
                    stars.append(bound)
                elif bound:
                    exports[name] = bound
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.add(node.name)
            exports.pop(node.name, None)
        elif isinstance(node, ast.ClassDef):
            exports.pop(node.name, None)
            classes[node.name] = node
            functions.add(f"{node.name}.__init__")  # its constructor, defined, inherited or a dataclass's
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            pending[0:0] = [*node.body, *getattr(node, "orelse", []), *getattr(node, "finalbody", []),
                            *(item for handler in getattr(node, "handlers", []) for item in handler.body)]
    for name in classes:  # methods, also those inherited from classes of the module (as summaries.py lists them)
        functions.update(f"{name}.{method}" for method in _methods(name, classes))
    return ModuleOutline(exports, tuple(stars), frozenset(functions))


def _methods(name: str, classes: dict[str, ast.ClassDef]) -> set[str]:
    """The methods of class `name` and of its bases among `classes` (the module's own)."""
    found: set[str] = set()
    pending, seen = [name], set()
    while pending and len(seen) < 8:
        klass = classes.get(pending.pop())
        if klass is None or klass.name in seen:
            continue
        seen.add(klass.name)
        found.update(item.name for item in klass.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)))
        pending.extend(base.id for base in klass.bases if isinstance(base, ast.Name))
    return found


def text_exports(text: str, package: str | None) -> dict[str, str]:
    """The dotted names a module's text imports, by their last part (a module whose text names
    neither TensorFlow, Keras nor a start method is read no further)."""
    return {name.rpartition(".")[2]: name for name in imported_names(text, package) if "." in name}


def constants_in(text: str) -> dict[str, float]:
    """`constants` of a module's text, parsed only when a line looks like `NAME = <number>`."""
    if not _NUMBER_ASSIGNMENT.search(text):
        return {}
    try:
        return constants(ast.parse(text))
    except (SyntaxError, ValueError, RecursionError):
        return {}


def constants(tree: ast.Module) -> dict[str, float]:
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
