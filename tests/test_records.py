"""tfproc_lint/records.py behaves as the frozen dataclasses it replaces, on the points the package uses."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import ClassVar

import pytest

from tfproc_lint.records import field, fields, record, replace


@record
class Point:
    x: int
    y: int = 0
    label: str = field(default="", compare=False)
    kind: ClassVar[str] = "point"


@dataclasses.dataclass(frozen=True)
class DataPoint:
    x: int
    y: int = 0
    label: str = dataclasses.field(default="", compare=False)
    kind: ClassVar[str] = "point"


@record
class Labelled(Point):
    tag: str = "t"


@record(eq=False, repr=False)
class ByIdentity:
    value: int


def test_made_like_a_dataclass() -> None:
    assert [f.name for f in fields(Point)] == ["x", "y", "label"]
    for made, made_as_dataclass in [(Point(1), DataPoint(1)), (Point(1, 2, "a"), DataPoint(1, 2, "a")),
                                    (Point(x=1, label="b"), DataPoint(x=1, label="b"))]:
        assert (made.x, made.y, made.label) == (made_as_dataclass.x, made_as_dataclass.y, made_as_dataclass.label)
        assert repr(made) == repr(made_as_dataclass).replace("DataPoint", "Point")
    assert Point.kind == "point" and Point.__match_args__ == ("x", "y", "label")


@pytest.mark.parametrize("make", [lambda: Point(), lambda: Point(1, x=2), lambda: Point(1, z=3),
                                  lambda: Point(1, 2, "", 4)])
def test_wrong_arguments_raise_type_error(make) -> None:
    with pytest.raises(TypeError):
        make()


def test_frozen() -> None:
    point = Point(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        del point.x


def test_equality_and_hash_leave_out_fields_that_do_not_compare() -> None:
    assert Point(1, 2, "a") == Point(1, 2, "b")
    assert hash(Point(1, 2, "a")) == hash(Point(1, 2, "b"))
    assert Point(1, 2) != Point(1, 3)
    assert Point(1) != Labelled(1)  # another class is never equal, as with dataclasses
    assert ByIdentity(1) != ByIdentity(1) and len({ByIdentity(1), ByIdentity(1)}) == 2


def test_subclass_adds_fields_after_inherited_ones() -> None:
    assert [f.name for f in fields(Labelled)] == ["x", "y", "label", "tag"]
    assert Labelled(1, tag="u").tag == "u"


def test_post_init_runs() -> None:
    @record
    class Dedented:
        text: str

        def __post_init__(self) -> None:
            object.__setattr__(self, "text", self.text.strip())

    assert Dedented("  a ").text == "a"


def test_declaration_errors_as_a_dataclass_gives_them() -> None:
    with pytest.raises(TypeError):
        @record
        class RequiredAfterDefault:
            a: int = 0
            b: int
    with pytest.raises(ValueError):
        @record
        class MutableDefault:
            a: list = []  # noqa: RUF012


def test_pickle_and_copy_keep_the_fields() -> None:
    point = Labelled(1, 2, "a", "u")
    for copied in (pickle.loads(pickle.dumps(point)), copy.copy(point), copy.deepcopy(point)):
        assert copied == point and copied.label == "a"


def test_replace_copies_with_changes() -> None:
    point = Labelled(1, 2, "a", "u")
    assert replace(point, y=5) == Labelled(1, 5, "a", "u") and point.y == 2
    with pytest.raises(TypeError):
        replace(point, z=1)
