"""Frozen records whose methods are shared, not written for each class.

A frozen dataclass writes and compiles its `__init__`, `__setattr__`, `__delattr__`, `__eq__`,
`__hash__` and `__repr__` for every class: 0.3-0.7 ms a class here, which every worker process
pays at start-up (the engine, the rules and the knowledge declare about a hundred records).
`@record` gives a class the same behaviour from functions written once, which read the class's
field list: defining one costs microseconds, making one a few more than a dataclass. Use it for
records made rarely (findings, facts, knowledge); keep `dataclass` for those made per name or
per call (`Value`, `Binding`) and those `dataclasses.replace` or `asdict` is used on.

    @record
    class Route:
        method: str
        line: int = 0

Frozen (assigning raises `FrozenInstanceError`), keyword or positional arguments in field order,
defaults, `__post_init__`, `__match_args__`, `replace()`, and unless turned off, equality and hashing on the
fields that compare and a dataclass-style `repr`. Class variables (`ClassVar[...]`) and a field
with a mutable default are refused as a dataclass refuses them (`field(default_factory=...)` is
not supported: a record's defaults are immutable values).
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError
from typing import Any

_MISSING: Any = object()


class Field:
    """One field of a record: its name, its default (or none) and whether it counts in equality,
    hashing and `key()`s (`compare`); `worded` marks text that an analysis module words."""

    __slots__ = ("name", "default", "compare", "worded")

    def __init__(self, default: Any = _MISSING, *, compare: bool = True, worded: bool = False) -> None:
        self.name = ""
        self.default = default
        self.compare = compare
        self.worded = worded

    def __repr__(self) -> str:
        return f"Field({self.name!r}, compare={self.compare}, worded={self.worded})"


def field(default: Any = _MISSING, *, compare: bool = True, worded: bool = False) -> Any:
    """A field with options, as `dataclasses.field`: `name: str = field(compare=False)`."""
    return Field(default, compare=compare, worded=worded)


def fields(record_or_class) -> tuple[Field, ...]:
    return record_or_class.__record_fields__


def replace(made, /, **changes):
    """A copy of the record `made` with `changes`, as `dataclasses.replace`."""
    values = {f.name: getattr(made, f.name) for f in made.__record_fields__}
    unknown = set(changes) - set(values)
    if unknown:
        raise TypeError(f"{type(made).__name__} has no field {sorted(unknown)[0]!r}")
    return type(made)(**{**values, **changes})


def record(cls=None, /, *, eq: bool = True, repr: bool = True):  # noqa: A002 - as dataclass's
    """Declare `cls` a frozen record (see the module's docstring)."""

    def declare(cls):
        inherited = {f.name: f for base in reversed(cls.__mro__[1:]) for f in getattr(base, "__record_fields__", ())}
        for name, annotation in cls.__dict__.get("__annotations__", {}).items():
            if _is_class_variable(annotation):
                continue
            declared = cls.__dict__.get(name, _MISSING)
            if isinstance(declared, Field):
                spec = declared
                if spec.default is _MISSING:
                    delattr(cls, name)
                else:
                    setattr(cls, name, spec.default)
            else:
                spec = Field(declared)
            if isinstance(spec.default, (list, dict, set)):
                raise ValueError(f"mutable default {type(spec.default).__name__} for field {name} is not allowed")
            spec.name = name
            inherited.pop(name, None)
            inherited[name] = spec
        specs = tuple(inherited.values())
        required_after_default = [f.name for i, f in enumerate(specs) if f.default is _MISSING
                                  and any(g.default is not _MISSING for g in specs[:i])]
        if required_after_default:
            raise TypeError(f"non-default argument {required_after_default[0]!r} follows default argument")
        cls.__record_fields__ = specs
        cls.__match_args__ = tuple(f.name for f in specs)
        cls.__init__ = _init
        cls.__setattr__ = _refuse_assignment
        cls.__delattr__ = _refuse_deletion
        if eq:
            cls.__eq__ = _equal
            cls.__hash__ = _hash
        if repr:
            cls.__repr__ = _repr
        return cls

    return declare if cls is None else declare(cls)


def _is_class_variable(annotation) -> bool:
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__qualname__", "") or repr(annotation)
    return text.startswith(("ClassVar", "typing.ClassVar"))


def _init(self, *args, **kwargs) -> None:
    specs = type(self).__record_fields__
    if len(args) > len(specs):
        raise TypeError(f"{type(self).__name__}() takes {len(specs)} arguments but {len(args)} were given")
    for spec, value in zip(specs, args):
        if spec.name in kwargs:
            raise TypeError(f"{type(self).__name__}() got multiple values for argument {spec.name!r}")
        object.__setattr__(self, spec.name, value)
    for spec in specs[len(args):]:
        value = kwargs.pop(spec.name, spec.default)
        if value is _MISSING:
            raise TypeError(f"{type(self).__name__}() missing required argument {spec.name!r}")
        object.__setattr__(self, spec.name, value)
    if kwargs:
        raise TypeError(f"{type(self).__name__}() got an unexpected keyword argument {next(iter(kwargs))!r}")
    post_init = getattr(self, "__post_init__", None)
    if post_init is not None:
        post_init()


def _refuse_assignment(self, name: str, value) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _refuse_deletion(self, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _compared(self) -> tuple:
    return tuple(getattr(self, f.name) for f in type(self).__record_fields__ if f.compare)


def _equal(self, other) -> bool:
    if other.__class__ is not self.__class__:
        return NotImplemented
    return _compared(self) == _compared(other)


def _hash(self) -> int:
    return hash(_compared(self))


def _repr(self) -> str:
    shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in type(self).__record_fields__)
    return f"{type(self).__qualname__}({shown})"
