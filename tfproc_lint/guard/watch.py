"""Patch TensorFlow and `multiprocess` when the program imports them, not before: the guard itself
imports neither. A finder at the front of sys.meta_path wraps the loader of the watched top-level
packages; any other import costs one set lookup."""

from __future__ import annotations

import sys


class _Loader:  # no importlib.abc base: importing it costs more than the whole guard
    def __init__(self, loader, after):
        self.loader, self.after = loader, after

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        module.__loader__ = self.loader
        if module.__spec__ is not None:
            module.__spec__.loader = self.loader
        self.loader.exec_module(module)
        self.after(module)

    def __getattr__(self, name):
        return getattr(self.loader, name)


class Watcher:
    def __init__(self, callbacks):
        self.callbacks = callbacks  # top-level package name -> function(module) once imported

    def find_spec(self, name, path=None, target=None):
        after = self.callbacks.get(name)
        if after is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _Loader(spec.loader, after)
        return spec


def watch(callbacks) -> None:
    """Call callbacks[name](module) for each package already imported, and on import for the others."""
    waiting = {}
    for name, after in callbacks.items():
        if name in sys.modules:
            after(sys.modules[name])
        else:
            waiting[name] = after
    if waiting and not any(isinstance(f, Watcher) for f in sys.meta_path):
        sys.meta_path.insert(0, Watcher(waiting))
