"""The package's layers (docs/design.md) from every module's imports, read with `ast`.

Every import counts: at module level, inside a function (a lazy import that hides a cycle is still
a cycle) and under `if TYPE_CHECKING:`.
"""

from __future__ import annotations

import ast
from pathlib import Path


ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "tfproc_lint"

# Lowest first; a module may import its own layer and those below it. Modules not listed are
# front ends (cli, flake8_plugin, batch, cache, docs, output/, server/).
LAYERS = {
    "records": {"tfproc_lint.records"},
    "knowledge": {"tfproc_lint.knowledge"},
    "data": {"tfproc_lint", "tfproc_lint.diagnostics", "tfproc_lint.config", "tfproc_lint.links",
             "tfproc_lint.rule_index", "tfproc_lint.source", "tfproc_lint.files",
             "tfproc_lint.project_layout", "tfproc_lint.options"},
    "analysis": {"tfproc_lint.analysis"},
    "fixes": {"tfproc_lint.fixes"},
    "rules": {"tfproc_lint.rules"},
    "engine": {"tfproc_lint.parsing", "tfproc_lint.project", "tfproc_lint.noqa", "tfproc_lint.engine",
               "tfproc_lint.fixing", "tfproc_lint.add_noqa", "tfproc_lint.notebook", "tfproc_lint.magics"},
}
ORDER = [*LAYERS, "front end"]


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def imports_of(name: str, path: Path) -> set[str]:
    """Every module `name` imports, as absolute names (`from x import y` is `x.y` when y is a module)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.add(full if full in MODULES else base)
    return found


GRAPH = {name: imports_of(name, path) for name, path in MODULES.items()}


def own_imports(name: str) -> set[str]:
    return {imported for imported in GRAPH[name] if imported in MODULES and imported != name}


def layer_of(name: str) -> str:
    for layer, members in LAYERS.items():
        if name in members or any(name.startswith(f"{member}.") for member in members if member != PACKAGE):
            return layer
    return "front end"


def test_the_layers_cover_modules_that_exist() -> None:
    listed = {member for members in LAYERS.values() for member in members}
    assert listed <= set(MODULES), listed - set(MODULES)


def test_the_linter_does_not_import_the_probe() -> None:
    """The probe is a front end: the docs read what it observed as data (docs/probe/evidence.json).
    The one exception is a sibling front end: `tfproc-lint probe` hands its arguments to the probe's
    command line."""
    importers = {name for name, imported in GRAPH.items() if any(i.split(".")[0] == "runtime_probe" for i in imported)}
    assert importers <= {f"{PACKAGE}.cli"}
    assert all(layer_of(name) == "front end" for name in importers)


def test_imports_only_go_downwards() -> None:
    upward = []
    for name in MODULES:
        if name.startswith(f"{PACKAGE}.guard"):
            continue  # test_the_guard_imports_nothing_of_the_linter
        rank = ORDER.index(layer_of(name))
        upward += [f"{name} ({layer_of(name)}) imports {imported} ({layer_of(imported)})"
                   for imported in sorted(own_imports(name)) if ORDER.index(layer_of(imported)) > rank]
    assert not upward, "\n".join(upward)


def test_rules_and_fixes_do_not_import_the_engine() -> None:
    engine = LAYERS["engine"]
    offenders = [(name, imported) for name in MODULES if layer_of(name) in ("rules", "fixes", "analysis")
                 for imported in own_imports(name) if imported in engine]
    assert not offenders


def test_the_guard_imports_nothing_of_the_linter() -> None:
    """The guard is loaded into the user's program: it must not pull in LibCST or the analysis. It
    shares the knowledge package, the linter's leaf, and the records it declares its tables with."""
    guard = f"{PACKAGE}.guard"
    offenders = [(name, imported) for name in MODULES if name == guard or name.startswith(f"{guard}.")
                 for imported in own_imports(name)
                 if not (imported == guard or imported.startswith(f"{guard}."))
                 and layer_of(imported) not in ("knowledge", "records")]
    assert not offenders


def test_the_knowledge_is_a_leaf() -> None:
    """Plain data: no LibCST, nothing else of the package but its records (the guard imports it)."""
    offenders = [(name, imported) for name in MODULES if layer_of(name) in ("knowledge", "records")
                 for imported in GRAPH[name]
                 if imported.split(".")[0] == "libcst"
                 or (imported in MODULES and layer_of(imported) not in ("knowledge", "records"))]
    assert not offenders


def import_cycles(modules) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    modules = set(modules)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles = []
    for start in sorted(modules):
        if start in index:
            continue
        work = [(start, iter(sorted(own_imports(start) & modules)))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(own_imports(child) & modules))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(sorted(component))
    return cycles


def test_the_cycle_finder_finds_a_cycle(monkeypatch) -> None:
    fake = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    monkeypatch.setitem(globals(), "own_imports", lambda name: fake[name])
    assert import_cycles(fake) == [["a", "b", "c"]]


def test_no_import_cycles() -> None:
    linter = [name for name in MODULES if not name.startswith(f"{PACKAGE}.guard")]
    assert import_cycles(linter) == []


def test_no_import_cycles_in_the_guard() -> None:
    """The package's install() is the composition root: it hands tfhooks' traps to crossing
    through state, and a spawned child's bootstrap calls the package, not crossing."""
    assert import_cycles(name for name in MODULES if name.startswith(f"{PACKAGE}.guard")) == []
