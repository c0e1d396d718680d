"""Another module's facts as the analysis of an importing module reads them: the summary data
(plain, serialisable: `ModuleSummary`, `FunctionFacts`, `Effect`, `Place`) and `ProjectNames`,
which resolves the importing module's qualified names through the summaries (`summaries.py`
computes them; tfproc_lint/project.py provides them).

`ProjectNames` answers `function("pkg.models.build")`, `state("pkg.registry.MODEL")`,
`modules_run_by_import("pkg.registry")`, following re-exports (`from .models import build` in a
package's `__init__.py`, `from x import *`) transitively; cycles end the search.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from enum import Enum
from typing import Callable

import libcst as cst

from tfproc_lint.analysis.kinds import Kind
from tfproc_lint.analysis.symbols import imported_module_names

MAX_EXPORT_STEPS = 8  # re-exports followed, `pkg` -> `pkg.api` -> `pkg.api.models` ...


@dataclass(frozen=True)
class Place:
    """Where something happens in another module: its display path, 1-based line and, where known,
    0-based column and end (a finding's related place marks that span)."""

    path: str
    line: int
    column: int = 0
    end_line: int | None = None  # None: the end is not known (only the line is)
    end_column: int | None = None

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(frozen=True)
class Effect:
    """A runtime start (or a setting) in another module: why, and where."""

    reason: str  # "builds a Keras model"
    place: Place
    # Where `place` is in yet another module: the statement of the module whose import (or
    # function) this is that leads there, the one to change (reason: "calls load_ranker()").
    trigger: Effect | None = None


class SettingKind(str, Enum):
    CONFIGURATION = "configuration"  # a `tf.config` call (TFP402)
    ENVIRONMENT = "environment"  # an environment variable TensorFlow reads when its runtime starts (TFP403)
    START_METHOD = "start_method"  # `multiprocessing.set_start_method(...)` without force=True (TFP203)


@dataclass(frozen=True)
class Setting:
    """A setting that a function makes (directly or through the functions it calls) and that can be
    made only once: TensorFlow reads it when its runtime starts (made after, it raises or is ignored),
    or the start method (set once the default context is fixed, it raises)."""

    kind: SettingKind
    name: str  # RUNTIME_CONFIGURATION's name, the first variable of RUNTIME_ENVIRONMENT it sets, the method
    spelled: str  # as written: `tf.config.threading.set_intra_op_parallelism_threads`, `os.environ["TF_..."]`
    place: Place


@dataclass(frozen=True)
class FunctionFacts:
    name: str  # qualified within its module: "build", "Registry.__init__", "Registry.load"
    place: Place  # where it is defined
    starts: Effect | None = None  # calling it may start TensorFlow's runtime
    returns: str | None = None  # the Kind value of the TensorFlow state it returns ("keras_model")
    runs_tf: bool = False  # its code starts or uses the runtime (as a worker: a TF worker)
    # As a worker, it builds TF state on every call where one build per worker would serve every
    # call (TFP301): the first such build, and where.
    builds: Effect | None = None
    ray_task: bool = False  # decorated with `@ray.remote`: `f.remote(...)` runs it as a Ray task
    # A constructor (`Class.__init__`): the `self.x` attributes holding TF state once the object is
    # made, whatever its arguments: (attribute, Kind value, line).
    holds: tuple[tuple[str, str, int], ...] = ()
    # The project class (qualified name) of the object it returns: a factory (`make_detector()`
    # returning `Detector(...)`), for `obj.method()` on what it returns (analysis/project_calls.py).
    instance_of: str | None = None
    # A constructor of a `multiprocessing.Process` subclass: the library base it derives from
    # ("multiprocessing.Process"); the object's `start()` runs its `run` in a child.
    process_base: str | None = None
    # The settings calling it makes (`tf.config`, environment variables), in its own code and the
    # project functions it calls, to a bounded depth (analysis/settings.py `settings_made`).
    settings: tuple[Setting, ...] = ()


@dataclass(frozen=True)
class CallerStart:
    """Another project module calls a function of this module after its runtime may have started
    (a fork in that function forks a parent whose runtime runs)."""

    function: str  # the function called, qualified within this module: "run_pool", "Scorer.__init__"
    call: Place  # where the other module calls it
    start: Effect  # what started the runtime there before the call, and where
    start_method: str | None = None  # the start method that module sets (`set_start_method`), if any


@dataclass(frozen=True)
class ModuleSummary:
    module: str
    path: str  # display path
    functions: Mapping[str, FunctionFacts] = field(default_factory=dict)
    state: dict[str, tuple[str, int]] = field(default_factory=dict)  # global -> (Kind value, line)
    on_import: Effect | None = None  # importing it may start the runtime
    start_method: tuple[str, int] | None = None  # set_start_method(...) at import: (method, line)
    fixes_context: Effect | None = None  # importing it fixes the default start method (TFP203)
    exports: dict[str, str] = field(default_factory=dict)  # name -> absolute qualified name
    star_exports: tuple[str, ...] = ()  # modules whose public names `from m import *` re-exports
    constants: dict[str, float] = field(default_factory=dict)  # module-level numbers bound once (`GPU_SHARE = 0.5`)

    def to_dict(self, functions: Mapping[str, FunctionFacts] | None = None) -> dict:
        """Plain data (JSON); `functions`: only these facts (those worked out so far), not all."""
        data = asdict(replace(self, functions={}))
        chosen = self.functions if functions is None else functions
        data["functions"] = {name: asdict(facts) for name, facts in chosen.items()}
        return data

    @classmethod
    def from_dict(cls, data: dict) -> "ModuleSummary":
        def effect(item):
            return None if item is None else Effect(item["reason"], Place(**item["place"]),
                                                    effect(item.get("trigger")))

        functions = {name: FunctionFacts(f["name"], Place(**f["place"]), effect(f["starts"]), f["returns"],
                                         f["runs_tf"], effect(f["builds"]), f["ray_task"],
                                         tuple(tuple(held) for held in f["holds"]), f.get("instance_of"),
                                         f.get("process_base"),
                                         tuple(_setting(item) for item in f.get("settings", ())))
                     for name, f in data["functions"].items()}
        return cls(module=data["module"], path=data["path"], functions=functions,
                   state={name: (kind, line) for name, (kind, line) in data["state"].items()},
                   on_import=effect(data["on_import"]),
                   start_method=tuple(data["start_method"]) if data["start_method"] else None,
                   fixes_context=effect(data["fixes_context"]), exports=dict(data["exports"]),
                   star_exports=tuple(data["star_exports"]), constants=dict(data["constants"]))


def _setting(item: dict) -> Setting:
    return Setting(SettingKind(item["kind"]), item["name"], item["spelled"], Place(**item["place"]))


class ProjectNames:
    """Resolves an importing module's qualified names through the project's summaries.

    `provider(module_name)` gives a module's summary (None: not a module of this project);
    `package`: the importing module's package, for relative imports (None: unknown)."""

    def __init__(self, provider: Callable[[str], ModuleSummary | None], package: str | None,
                 entry_start_method: Callable[[], tuple[str, str] | None] = lambda: None,
                 importers: Callable[[], tuple[Place, ...]] = tuple,
                 callers: Callable[[], tuple[CallerStart, ...]] = tuple) -> None:
        self.provider = provider
        self.package = package
        # (method, why): the start method the project's entry points that import this module set
        self.entry_start_method = entry_start_method
        # Where the project's other files import this module (read when asked)
        self.importers = importers
        # The calls the project's other files make into this module after their runtime may have
        # started (read when asked: it analyses the importing files)
        self.callers = callers

    def summary(self, module: str) -> ModuleSummary | None:
        return self.provider(module)

    def _split(self, qualified: str, steps: int = 0):
        """(summary, attribute) for `pkg.mod.name`: the longest module prefix that is a project
        module, and the rest; re-exports followed."""
        parts = qualified.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            summary = self.provider(".".join(parts[:cut]))
            if summary is None:
                continue
            rest = parts[cut:]
            head = rest[0]
            if head in summary.exports and steps < MAX_EXPORT_STEPS and head not in summary.functions:
                target = ".".join([summary.exports[head], *rest[1:]])
                return self._split(target, steps + 1)
            if head not in summary.functions and head not in summary.state and steps < MAX_EXPORT_STEPS:
                for star in summary.star_exports:
                    found = self._split(".".join([star, *rest]), steps + 1)
                    if found[0] is not None:
                        return found
            return summary, ".".join(rest)
        return None, ""

    def locate(self, qualified: str) -> tuple[str, str] | None:
        """(project module, name within it) that `qualified` names, re-exports followed; None when it
        names nothing in the project's modules."""
        summary, attribute = self._split(qualified)
        return (summary.module, attribute) if summary is not None else None

    def function(self, qualified: str | None) -> FunctionFacts | None:
        """The facts of the project function (or class, for its constructor) `qualified` names."""
        if not qualified:
            return None
        summary, attribute = self._split(qualified)
        if summary is None:
            return None
        return summary.functions.get(attribute) or summary.functions.get(f"{attribute}.__init__")

    def state(self, qualified: str | None) -> tuple[Kind, Place] | None:
        """The kind of TensorFlow state a project module's global holds, and where it is made."""
        if not qualified:
            return None
        summary, attribute = self._split(qualified)
        if summary is None or attribute not in summary.state:
            return None
        kind, line = summary.state[attribute]
        return Kind(kind), Place(summary.path, line)

    def constant(self, qualified: str | None) -> float | None:
        """The number a project module's global is bound to once (`config.GPU_SHARE`), or None."""
        if not qualified:
            return None
        summary, attribute = self._split(qualified)
        return summary.constants.get(attribute) if summary is not None else None

    def modules_run_by_import(self, imported: str) -> list[ModuleSummary]:
        """The project modules `import a.b.c` runs: `a`, `a.b`, `a.b.c` (those that exist)."""
        parts = imported.split(".")
        found = []
        for cut in range(1, len(parts) + 1):
            summary = self.provider(".".join(parts[:cut]))
            if summary is not None:
                found.append(summary)
        return found

    def run_by(self, statement):
        """The summaries of the project modules an import statement runs, in order."""
        for name in imported_module_names(statement, self.package):
            yield from self.modules_run_by_import(name)

    def import_effect(self, statement, attribute: str, own_path: str | None = None
                      ) -> tuple[ModuleSummary, Effect] | None:
        """The first project module an import statement runs whose summary has an effect at import
        (`attribute`: "on_import", "fixes_context"), with that effect. An effect that happens in
        `own_path` (the importing module's file) comes from an import cycle back into that module,
        which finds it half-initialised and runs none of it: skipped."""
        return next(((summary, getattr(summary, attribute)) for summary in self.run_by(statement)
                     if getattr(summary, attribute) is not None
                     and not _same_file(getattr(summary, attribute).place.path, own_path)), None)

    def imported_start_method(self, analysis) -> tuple[str, int] | None:
        """The start method that the project modules `analysis`'s module imports at its top level
        set at import (the first such import's)."""
        return next((summary.start_method for statement in _top_level_imports(analysis.module.body)
                     for summary in self.run_by(statement) if summary.start_method is not None), None)


def _same_file(path: str, own_path: str | None) -> bool:
    if own_path is None:
        return False
    return os.path.normcase(os.path.abspath(path)) == os.path.normcase(os.path.abspath(own_path))


def _top_level_imports(statements):
    """Import statements that run at import: at the top level, or in its `if`/`try`/`with` blocks."""
    for statement in statements:
        if isinstance(statement, cst.SimpleStatementLine):
            yield from (small for small in statement.body if isinstance(small, (cst.Import, cst.ImportFrom)))
        elif isinstance(statement, (cst.If, cst.Try, cst.With)):
            yield from _top_level_imports(statement.body.body)
            for handler in getattr(statement, "handlers", ()):
                yield from _top_level_imports(handler.body.body)
            orelse = getattr(statement, "orelse", None)
            if isinstance(orelse, cst.If):
                yield from _top_level_imports([orelse])
            elif orelse is not None:
                yield from _top_level_imports(orelse.body.body)
