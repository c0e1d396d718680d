"""The contract between a rule's finding and its rewrite."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tfproc_lint.diagnostics import Applicability

if TYPE_CHECKING:
    from tfproc_lint.analysis.file_analysis import FileAnalysis


class FixBuilder:
    """Plans the rewrite for one finding (see tfproc_lint/fixes/): `plan` checks that the rewrite
    applies and returns the node replacements, or None (manual edit required). Planning is cheap;
    the engine turns a plan into text edits only when they are needed (fixing, JSON, SARIF)."""

    title: str = ""
    applicability: Applicability = Applicability.UNSAFE

    def plan(self, analysis: "FileAnalysis") -> dict | None:  # pragma: no cover - interface
        raise NotImplementedError
