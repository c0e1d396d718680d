"""The file's call sites by the canonical name of what they call (`tf.compat.v1.Session()` under
`tensorflow.Session`), each name resolved once for the file, where the call is evaluated: what the
questions that look for calls of given functions (`set_start_method`, `tf.config` setters, GPU
queries, Dask clusters) read instead of resolving every call again."""

from __future__ import annotations

from collections.abc import Collection, Iterator
from functools import cached_property

from tfproc_lint.analysis.classifier import Classifier
from tfproc_lint.analysis.symbols import CallSite, SymbolTable


class CallIndex:
    """`symbols.calls` with each callee's canonical name (`classifier.qualified_name(site.node.func,
    site.scope, site.order)`, None where it does not resolve), built on first use."""

    def __init__(self, symbols: SymbolTable, classifier: Classifier) -> None:
        self.symbols = symbols
        self.classifier = classifier

    @cached_property
    def _names(self) -> list[str | None]:
        qualified_name = self.classifier.qualified_name
        return [qualified_name(site.node.func, site.scope, site.order) for site in self.symbols.calls]

    @cached_property
    def _positions(self) -> dict[str, list[int]]:
        """Name -> the positions in `symbols.calls` of the calls of it."""
        found: dict[str, list[int]] = {}
        for position, name in enumerate(self._names):
            if name is not None:
                found.setdefault(name, []).append(position)
        return found

    def resolved(self) -> Iterator[tuple[CallSite, str | None]]:
        """Every call site with its callee's name, in the symbol table's order."""
        return zip(self.symbols.calls, self._names)

    def named(self, names: str | Collection[str]) -> list[CallSite]:
        """The call sites of `names` (one name, or several), in the symbol table's order."""
        if isinstance(names, str):
            names = (names,)
        positions = [p for name in set(names) for p in self._positions.get(name, ())]
        calls = self.symbols.calls
        return [calls[p] for p in sorted(positions)]
