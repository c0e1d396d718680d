"""Engine objects a module does not make itself, for the engines (analysis/engines/).

- A parameter of a function of this file: typed by its annotation (`df: DataFrame`), by what every
  caller in the file passes, or, in a module that imports the engine, by a method only that engine's
  objects have, called on it in the function (`rdd.mapPartitions`, `df.rdd`, `df.mapInPandas`,
  `ddf.map_partitions`, `client.register_plugin`), also through a name made from it by members
  whose result is known (`df = df.repartition(8)`, then `df.rdd`) when only one starting type
  fits. Names other libraries share (`map`, `submit`, `scatter`, `filter`, `foreach`, `map_blocks`)
  type nothing: a `concurrent.futures` executor or an MPI communicator in a file that also imports
  Dask stays what it is (a miss rather than a false alarm; `client.submit`/`map`/`scatter` on a
  parameter count once the parameter is known as a Client).
- (Ray actor handles kept in a list, a loop variable or a `self` attribute, or received as
  parameters, are in engines/ray.py.)
- Names a star import of an engine module brings in (`from pyspark.sql.functions import *`).

Every function takes the module's `EngineRoutes` (`routes`) and never imports the engines package.
"""

from __future__ import annotations

import libcst as cst

from tfproc_lint.analysis.symbols import Binding, Scope
from tfproc_lint.analysis.values import argument, keyword
from tfproc_lint.knowledge import engines as knowledge

_MAX_DEPTH = 8
# For the rules' documentation (their "Ray, Dask and Spark" section).
RECEIVED = (
    "Engine objects count where a function receives them too: a parameter annotated with the engine's "
    "class, passed one by every caller in the file, or given a method only that engine has "
    "(`rdd.mapPartitions`, `df.rdd`, `df.mapInPandas`, `ddf.map_partitions`, `client.register_plugin`, "
    "`handle.m.remote`) in a module that imports the engine; `map`, `submit` and `scatter` alone, which "
    "executors and MPI communicators share, do not make a parameter a Dask client (a miss rather than a "
    "false alarm). Ray actor handles count in lists, loops and `self` attributes, and Spark and Dask "
    "names from a star import of their modules. "
)


def imported_engines(routes) -> set[str]:
    """The engines ("ray", "dask", "spark") the module imports (star imports too)."""
    symbols = routes.symbols
    return {knowledge.ENGINE_PACKAGES[name.split(".")[0]] for name in [*symbols.imported_modules, *symbols.star_imports]
            if name.split(".")[0] in knowledge.ENGINE_PACKAGES}


# Parameters -----------------------------------------------------------------------------------------
def parameter_type(routes, binding: Binding, depth: int = 0) -> str | None:
    """The engine object a function's parameter holds, or None when nothing says."""
    function = binding.scope.function
    param = binding.value
    if function is None or not isinstance(param, cst.Param) or depth > _MAX_DEPTH:
        return None
    return (_annotated_type(routes, function, param) or _passed_type(routes, function, param, depth)
            or _used_as(routes, function, binding))


def _annotated_type(routes, function, param: cst.Param) -> str | None:
    if param.annotation is None:
        return None
    scope = function.scope.parent or function.scope
    name = routes.classifier.qualified_name(param.annotation.annotation, scope, function.order)
    return knowledge.ENGINE_ANNOTATIONS.get(name or "")


def _passed_type(routes, function, param: cst.Param, depth: int) -> str | None:
    """What every call of the function by name in this file passes for the parameter, when all agree."""
    positional = [*function.node.params.posonly_params, *function.node.params.params]
    index = next((i for i, p in enumerate(positional) if p is param), None)
    if function.self_name is not None and index is not None:
        if index == 0:
            return None
        index -= 1
    found = set()
    for site in routes.classifier._call_sites().get(function.node, ()):
        if any(arg.star for arg in site.node.args):
            return None
        given = argument(site.node, index, param.name.value) if index is not None \
            else keyword(site.node, param.name.value)
        if given is None:
            return None
        found.add(routes.object_type(given, site.scope, site.order, depth + 1))
    return found.pop() if len(found) == 1 else None


def _used_as(routes, function, binding: Binding) -> str | None:
    """The engine object an engine-only method called on the parameter (in its function, with the
    engine imported) says it is; None when uses disagree."""
    engines = imported_engines(routes)
    found = set()
    for site in routes.symbols.calls:
        first = _first_member(site.node.func)
        if first is None or not _inside(site.scope, function.scope):
            continue
        kind = knowledge.ENGINE_PARAMETER_MEMBERS.get(first[1])
        if kind is None or kind.split(".")[0] not in engines:
            continue
        bindings = routes.symbols.bindings_at(first[0].value, site.scope, site.order)
        if len(bindings) != 1:
            continue
        if bindings[0] is binding:
            found.add(kind)
            continue
        chain = _chain_from(routes, bindings[0], binding)  # `df = df.repartition(8)`, then `df.rdd`
        if chain is not None:
            given = {start for start in knowledge.ENGINE_OBJECT_CLASSES if _through(start, chain) == kind}
            if len(given) == 1:
                found |= given
    return found.pop() if len(found) == 1 else None


def _chain_from(routes, binding: Binding, param: Binding, depth: int = 0) -> list[str] | None:
    """The members taken from the parameter to make the value of `binding`, a name assigned a
    chain of calls and attributes rooted at the parameter (or at such a name); else None."""
    if binding.kind != "assign" or binding.value is None or depth > _MAX_DEPTH:
        return None
    members, node = [], binding.value
    while isinstance(node, (cst.Attribute, cst.Call)):
        if isinstance(node, cst.Attribute):
            members.append(node.attr.value)
        node = node.value if isinstance(node, cst.Attribute) else node.func
    if not isinstance(node, cst.Name) or not members:
        return None
    bindings = routes.symbols.bindings_at(node.value, binding.scope, binding.order)
    if len(bindings) != 1:
        return None
    if bindings[0] is param:
        return members[::-1]
    before = _chain_from(routes, bindings[0], param, depth + 1)
    return before + members[::-1] if before is not None else None


def _through(kind: str | None, members: list[str]) -> str | None:
    """The engine object these members give when taken in turn from a `kind` object, by what is
    known of each member (not ENGINE_PRODUCES' "*", which would take any name)."""
    for member in members:
        if kind is None:
            return None
        kind = knowledge.ENGINE_PRODUCES.get((kind, member)) or (
            kind if member in knowledge.ENGINE_PRESERVING_MEMBERS.get(kind, ()) else None)
    return kind


def _first_member(node) -> tuple[cst.Name, str] | None:
    """`p.rdd.mapPartitions` -> (p, "rdd"): the name a chain of calls and attributes starts from,
    and the first member taken of it."""
    while isinstance(node, (cst.Attribute, cst.Call)):
        if isinstance(node, cst.Call):
            node = node.func
            continue
        if isinstance(node.value, cst.Name):
            return node.value, node.attr.value
        node = node.value
    return None


def _inside(scope: Scope | None, function_scope: Scope) -> bool:
    while scope is not None:
        if scope is function_scope:
            return True
        scope = scope.parent
    return False


def is_parameter(routes, node, scope: Scope, order: int) -> bool:
    """A name bound to a parameter (of a function or lambda) and nothing else."""
    if not isinstance(node, cst.Name):
        return False
    bindings = routes.symbols.bindings_at(node.value, scope, order)
    return len(bindings) == 1 and bindings[0].kind == "param"


# Star imports ---------------------------------------------------------------------------------------
def star_imported(routes, node, scope: Scope, order: int) -> str | None:
    """`udf` after `from pyspark.sql.functions import *`: the engine name a bare, otherwise unbound
    name stands for, when every star import of the module is one of the engine modules known here
    (another module's star import might bind the same name)."""
    stars = routes.symbols.star_imports
    if not isinstance(node, cst.Name) or not stars or routes.symbols.bindings_at(node.value, scope, order):
        return None
    if any(module not in knowledge.ENGINE_STAR_EXPORTS for module in stars):
        return None
    for module in reversed(stars):  # the last star import binds the name
        if node.value in knowledge.ENGINE_STAR_EXPORTS[module]:
            return f"{module}.{node.value}"
    return None


def engine_name(routes, node, scope: Scope, order: int) -> str | None:
    """The qualified name of a name or attribute, also through an engine module's star import
    (`SparkSession.builder` after `from pyspark.sql import *`)."""
    name = routes.classifier.qualified_name(node, scope, order)
    if name is not None:
        return name
    members = []
    while isinstance(node, cst.Attribute):
        members.append(node.attr.value)
        node = node.value
    head = star_imported(routes, node, scope, order)
    return ".".join([head, *reversed(members)]) if head else None
