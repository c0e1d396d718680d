"""`# noqa` in the CLI behaves as in flake8 (the plugin leaves it to flake8 itself)."""

from __future__ import annotations

import pytest
from flake8.violation import Violation

from tfproc_lint.diagnostics import Diagnostic
from tfproc_lint.noqa import remove_noqa

# (comment on the finding's line, codes it silences among TFP101 / TFP201 / TFP301)
CASES = [
    ("", set()),
    ("# noqa", {"TFP101", "TFP201", "TFP301"}),
    ("# NOQA", {"TFP101", "TFP201", "TFP301"}),
    ("# NoQa", {"TFP101", "TFP201", "TFP301"}),
    ("# noqa: TFP101", {"TFP101"}),
    ("# noqa:TFP101", {"TFP101"}),
    ("# NOQA:TFP101", {"TFP101"}),
    ("# noqa: TFP101,TFP201", {"TFP101", "TFP201"}),
    ("# noqa: TFP101, TFP201", {"TFP101", "TFP201"}),
    ("# noqa: TFP101 TFP301", {"TFP101", "TFP301"}),
    ("# noqa: E501, TFP101", {"TFP101"}),
    ("# noqa: E501,W291", set()),  # names none of the line's findings: silences nothing
    ("# noqa: E501", set()),
    ("# noqa: TFP1", {"TFP101"}),  # a prefix, as in flake8
    ("# noqa: TFP", {"TFP101", "TFP201", "TFP301"}),
    ("# noqa: TFP10", {"TFP101"}),
    ("# noqa: TFP101 because the session is rebuilt", {"TFP101"}),
    ("# noqa: tfp101", set()),  # flake8 compares codes as written
    ("# noqa : TFP101", {"TFP101", "TFP201", "TFP301"}),  # not a code list: a bare noqa
    ("#noqa", set()),  # flake8 wants "# noqa"
]
CODES = ("TFP101", "TFP201", "TFP301")


def silenced(comment: str) -> set[str]:
    source = f"x = 1  {comment}\n"
    diagnostics = [Diagnostic(code, "message", "a.py", 1, 0) for code in CODES]
    kept = {d.code for d in remove_noqa(diagnostics, source)}
    return set(CODES) - kept


@pytest.mark.parametrize("comment, expected", CASES)
def test_noqa_comment(comment, expected) -> None:
    assert silenced(comment) == expected


@pytest.mark.parametrize("comment", [comment for comment, _ in CASES])
def test_same_decision_as_flake8(comment) -> None:
    line = f"x = 1  {comment}\n"
    flake8 = {code for code in CODES if Violation(code, "a.py", 1, 1, "message", line).is_inline_ignored(False)}
    assert silenced(comment) == flake8


def test_noqa_applies_to_its_own_line_only() -> None:
    source = "x = 1  # noqa: TFP101\ny = 2\n"
    diagnostics = [Diagnostic("TFP101", "m", "a.py", 1, 0), Diagnostic("TFP101", "m", "a.py", 2, 0)]
    assert [d.line for d in remove_noqa(diagnostics, source)] == [2]
