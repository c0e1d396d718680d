"""The contract between a rule's finding and its rewrite."""

from __future__ import annotations

from typing import TYPE_CHECKING, Union

from tfproc_lint.diagnostics import Applicability
from tfproc_lint.records import record

if TYPE_CHECKING:
    from tfproc_lint.analysis.file_analysis import FileAnalysis

# A rewrite: node -> replacement (a node, a sentinel, or a callable given the updated node), as
# fixes/common.py's `replace_nodes` applies it.
Plan = dict


@record
class Refusal:
    """No rewrite for this finding (manual edit required), and why, where the reason helps the
    user ("" where it would not)."""

    reason: str = ""


class FixBuilder:
    """Plans the rewrite for one finding (see tfproc_lint/fixes/): `plan` checks that the rewrite
    applies and returns its node replacements, or a `Refusal`. The engine then re-analyses the
    rewritten module and withdraws the fix if it would add or hide a finding."""

    title: str = ""
    applicability: Applicability = Applicability.UNSAFE

    @staticmethod
    def refuse(reason: str = "") -> Refusal:
        return Refusal(reason)

    def plan(self, analysis: "FileAnalysis") -> Union[Plan, Refusal]:  # pragma: no cover - interface
        raise NotImplementedError
