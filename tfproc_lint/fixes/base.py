"""The contract between a rule's finding and its rewrite."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tfproc_lint.diagnostics import Applicability

if TYPE_CHECKING:
    from tfproc_lint.analysis.file_analysis import FileAnalysis


class FixBuilder:
    """Plans the rewrite for one finding (see tfproc_lint/fixes/): `plan` checks that the rewrite
    applies and returns the node replacements, or None (manual edit required), setting `refusal`
    to say why when the reason helps the user. The engine then re-analyses the rewritten module
    and withdraws the fix if it would add a finding."""

    title: str = ""
    applicability: Applicability = Applicability.UNSAFE
    refusal: str = ""

    def refuse(self, reason: str) -> None:
        self.refusal = reason
        return None

    def plan(self, analysis: "FileAnalysis") -> dict | None:  # pragma: no cover - interface
        raise NotImplementedError
