"""Ray Serve deployments: the functions Serve runs on every request.

A class decorated with `@serve.deployment` (bare or called with options) is instantiated once per
replica; its `__init__` is where a model belongs. Its `__call__` and public methods serve requests
(FastAPI routes of an `@serve.ingress` class, methods called through a handle), apart from Serve's
own hooks, the methods `__init__` calls and `@serve.multiplexed` loaders (cached per model id). A
decorated function serves each request. The knowledge is data in knowledge/engines.py.
"""

from __future__ import annotations

import libcst as cst

from tfproc_lint.analysis.lineage import constructor_methods
from tfproc_lint.analysis.symbols import ClassInfo, FunctionInfo
from tfproc_lint.knowledge import engines as knowledge


def request_handlers(analysis) -> list[tuple[FunctionInfo, ClassInfo | None]]:
    """(function, its deployment class or None) for each function of this module that Ray Serve
    runs on every request."""
    if not analysis.engine_routes.active:
        return []
    found = []
    for info in analysis.symbols.functions.values():
        klass = info.class_info
        if klass is not None:
            if _decorated(analysis, klass.node, klass.outer, knowledge.RAY_SERVE_DEPLOYMENTS) \
                    and _serves_requests(info.node.name.value, klass) and not cached_by_serve(analysis, info):
                found.append((info, klass))
        elif _decorated(analysis, info.node, info.scope.parent or info.scope, knowledge.RAY_SERVE_DEPLOYMENTS):
            found.append((info, None))
    return found


def cached_by_serve(analysis, info: FunctionInfo) -> bool:
    """A `@serve.multiplexed` method: Serve keeps what it returns per model id."""
    return info.class_info is not None and _decorated(analysis, info.node, info.class_info.scope,
                                                      knowledge.RAY_SERVE_CACHED)


def _serves_requests(name: str, klass: ClassInfo) -> bool:
    """`__call__` and the public methods, but Serve's hooks and what `__init__` calls: a private
    helper runs for whichever method calls it (and is followed from there)."""
    if name in knowledge.RAY_SERVE_ONCE_METHODS or name in constructor_methods(klass):
        return False
    return name == "__call__" or not name.startswith("_")


def _decorated(analysis, node: cst.FunctionDef | cst.ClassDef, scope, names: frozenset[str]) -> bool:
    for decorator in node.decorators:
        target = decorator.decorator
        head = target.func if isinstance(target, cst.Call) else target
        if analysis.classifier.qualified_name(head, scope, analysis.symbols.end_of_file) in names:
            return True
    return False
