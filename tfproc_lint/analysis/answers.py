"""Questions about one file that several rules ask, or one rule several times (`memory_limits`,
`set_start_method_calls`): `@per_file` answers each once per analysis and keeps the answer on it
(`ModuleFacts.answers`). The answer is shared: callers read it and never change it."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import TypeVar

Answer = TypeVar("Answer")


def per_file(question: Callable[..., Answer]) -> Callable[..., Answer]:
    """`question(analysis)`, asked once per analysis."""

    @wraps(question)
    def answer(analysis) -> Answer:
        answers = analysis.answers
        if question not in answers:
            answers[question] = question(analysis)
        return answers[question]

    return answer
