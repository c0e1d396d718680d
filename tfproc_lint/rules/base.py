"""The rule contract and the registry that discovers one rule per `tfpNNN_*.py` module."""

from __future__ import annotations

import enum
import importlib
import re
import textwrap
from typing import TYPE_CHECKING, ClassVar, Iterable

import libcst as cst

from tfproc_lint import records
from tfproc_lint.diagnostics import Severity
from tfproc_lint.fixes.base import FixBuilder

if TYPE_CHECKING:
    from tfproc_lint.analysis.file_analysis import FileAnalysis
    from tfproc_lint.analysis.routes import Crossing


class FixAvailability(enum.Enum):
    """Whether a rule's findings come with a fix (Ruff's FixAvailability)."""

    NONE = "none"
    SOMETIMES = "sometimes"
    ALWAYS = "always"


def shown(**kwargs):
    """A `Finding` field its message shows but its identity leaves out: a line number or quoted
    code, which a rewrite elsewhere in the file may move or change."""
    return records.field(compare=False, **kwargs)


def worded(**kwargs):
    """A `Finding` field holding text an analysis module words (why a start method is assumed,
    what starts the runtime, what happens, a remedy, a route): part of the identity less the line
    numbers and quoted code in it, until the analysis gives facts instead."""
    return records.field(worded=True, **kwargs)


@records.record(eq=False, repr=False)
class Finding:
    """One shape of a rule's findings (Ruff's violation structs): the facts its message words,
    as plain data. Its fields, less the `shown()` ones, are its identity across a rewrite: a fix
    is verified by comparing the (code, `key()`) of the findings before and after it, so a
    message's wording is free to change."""

    def message(self) -> str:  # pragma: no cover - interface
        raise NotImplementedError

    def __repr__(self) -> str:
        shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in records.fields(self))
        return f"{type(self).__name__}({shown})"

    def key(self) -> tuple:
        return (type(self).__name__, *(_identity(getattr(self, f.name), f.worded)
                                       for f in records.fields(self) if f.compare))


def finding(cls):
    """Declare a `Finding` subclass: a frozen record (tfproc_lint/records.py) without `__eq__`,
    `__hash__` and its own `__repr__`: findings are compared by `key()` and shown by the base's
    `__repr__`."""
    return records.record(eq=False, repr=False)(cls)


def _identity(value, is_worded: bool):
    return LINE_OR_CODE.sub("_", value) if is_worded and isinstance(value, str) else value


LINE_OR_CODE = re.compile(r"lines? \d+(?:, \d+)*|`[^`]*`")


@records.record
class Report:
    """What a rule reports: the node to point at, the finding, an optional fix builder."""

    node: cst.CSTNode
    finding: Finding
    fix: FixBuilder | None = None
    related: tuple[tuple[cst.CSTNode, str], ...] = ()  # (node, "TensorFlow runtime started here")
    # The node whose finding this one follows from (a forked pool, for a setting its workers make
    # too late): a rewrite that fixes that finding may fix this one with it.
    cause: cst.CSTNode | None = None
    # Why there is no fix, where the rule knows: the rewrite belongs in another module ("the worker
    # `score` is defined in pkg/workers.py:5: its initializer belongs there"). Shown after "manual
    # edit required".
    manual: str = ""

    @property
    def message(self) -> str:
        return self.finding.message()


@records.record
class Example:
    """An inline example: the code and the codes it must produce (Fixit's VALID/INVALID).

    `code` and `fixed` are written as indented triple-quoted blocks (a backslash after the opening
    quotes, then the lines) and dedented here, as Fixit dedents its examples."""

    code: str
    expect: tuple[str, ...] = ()
    config: tuple[tuple[str, str], ...] = ()  # options for this example, e.g. (("target-python", "3.14"),)
    notebook: bool = False  # the code cells of a notebook (`# %%` starts a cell), linted as one
    # What `--fix --unsafe-fixes` makes of a bad example (Fixit's `expected_replacement`), checked by
    # tests/test_rules.py; None where the example is not about the fix.
    fixed: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "code", textwrap.dedent(self.code))
        if self.fixed is not None:
            object.__setattr__(self, "fixed", textwrap.dedent(self.fixed))


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]  # one line for `tfproc-lint rules` and SARIF shortDescription
    severity: ClassVar[Severity] = Severity.ERROR
    fix_availability: ClassVar[FixAvailability] = FixAvailability.NONE  # a rule may give the value: "sometimes"
    # An opt-in rule (flake8-bugbear's B9xx, Ruff's non-default rules) runs only when a selector
    # more specific than `TFP` names it: `--extend-select TFP3` or `TFP302`, never `--select TFP`.
    default_enabled: ClassVar[bool] = True
    # Documentation, one field per heading (Ruff's layout).
    what_it_does: ClassVar[str]
    why_bad: ClassVar[str]
    known_problems: ClassVar[str] = ""
    fix_safety: ClassVar[str]
    evidence: ClassVar[str]
    references: ClassVar[tuple[str, ...]]
    # Ray, Dask and Spark: what the rule reports there; the docs show it with the bad examples
    # that import an engine (each tested like the others).
    engines: ClassVar[str] = ""
    # The configuration options that change what the rule reports or says (the docs' Options):
    # "assume-start-method" and "target-python" (the start method assumed where the code names
    # none), "assume-gpu".
    options: ClassVar[tuple[str, ...]] = ()
    # The first bad example is the docs' Example, the first good one its Use instead.
    bad_examples: ClassVar[tuple[Example, ...]]
    good_examples: ClassVar[tuple[Example, ...]]

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        cls.fix_availability = FixAvailability(cls.fix_availability)  # an unknown value fails at import

    def check_crossing(self, crossing: "Crossing", analysis: "FileAnalysis") -> Iterable[Report]:
        return ()

    def check_file(self, analysis: "FileAnalysis") -> Iterable[Report]:
        return ()


def discover_rules() -> list[type[Rule]]:
    """Every `Rule` subclass defined in a `tfproc_lint/rules/tfpNNN_*.py` module, by code."""
    from tfproc_lint import rules as package

    found: list[type[Rule]] = []
    for name in package.rule_modules():
        module = importlib.import_module(f"{package.__name__}.{name}")
        for attribute in vars(module).values():
            if isinstance(attribute, type) and issubclass(attribute, Rule) and attribute is not Rule \
                    and attribute.__module__ == module.__name__:
                found.append(attribute)
    return sorted(found, key=lambda rule: rule.code)


_RULES: list[type[Rule]] | None = None


def all_rules() -> list[type[Rule]]:
    global _RULES
    if _RULES is None:
        _RULES = discover_rules()
    return _RULES


def rule_by_code(code: str) -> type[Rule] | None:
    return next((rule for rule in all_rules() if rule.code == code.upper()), None)
