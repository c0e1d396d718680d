"""Code actions for one document and range: each finding's fix as `tfproc-lint check` lists it (a
preferred quick fix when safe, a quick fix titled "Unsafe fix" otherwise; a fix that applies only
after other fixes brings them along and says so), `# noqa` for the finding's line, and every safe
fix at once (`source.fixAll.tfproc-lint`, what editors run on save)."""

from __future__ import annotations

from lsprotocol import types

from tfproc_lint.config import Config
from tfproc_lint.diagnostics import Applicability
from tfproc_lint.server import documents
from tfproc_lint.server.convert import to_lsp, workspace_edit
from tfproc_lint.server.documents import Snapshot
from tfproc_lint.server.positions import LineIndex

QUICK_FIX = types.CodeActionKind.QuickFix.value
FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.tfproc-lint"
KINDS = (QUICK_FIX, FIX_ALL)


def wanted(kind: str, only) -> bool:
    """Whether the client asked for this kind (`only` lists kinds or their parents, e.g. "source")."""
    return not only or any(kind == asked or kind.startswith(f"{asked}.") for asked in only)


def code_actions(snapshot: Snapshot, config: Config, uri: str, first_line: int, last_line: int, only,
                 encoding: str) -> list[types.CodeAction]:
    """Actions for the findings on 0-based lines `first_line`..`last_line` of document `uri`."""
    versions = {cell.uri: cell.version for cell in snapshot.cells} if snapshot.notebook else {
        snapshot.uri: snapshot.version}
    actions: list[types.CodeAction] = []
    if wanted(QUICK_FIX, only):
        actions += _quick_fixes(snapshot, config, uri, first_line, last_line, versions, encoding)
    if wanted(FIX_ALL, only):
        change, applied = documents.fix_all(snapshot, config)
        if change:
            actions.append(types.CodeAction(
                title=f"Fix all safe tfproc-lint findings ({applied})", kind=FIX_ALL,
                edit=workspace_edit(change, versions, encoding)))
    return actions


def _quick_fixes(snapshot, config, uri, first_line, last_line, versions, encoding) -> list[types.CodeAction]:
    located, program = documents.detailed(snapshot, config)
    texts = {cell.uri: cell.text for cell in snapshot.cells} if snapshot.notebook else {snapshot.uri: snapshot.text}
    indexes = {key: LineIndex(text, encoding) for key, text in texts.items()}
    actions, silenced = [], set()
    for item in located:
        if item.uri != uri or item.line - 1 > last_line or item.end_line - 1 < first_line:
            continue
        shown = program.to_cells(item.diagnostic) if program is not None else item.diagnostic
        diagnostic = to_lsp(shown, uri, indexes, snapshot)
        fix = item.diagnostic.fix
        if fix is not None:
            if fix.edits is None:  # `check` lists it as applying after other fixes: those come too
                change, others = documents.fix_after_others(snapshot, config, program, item)
            else:
                change, others = documents.apply(snapshot, program, fix.edits), []
            if change:
                safe = fix.applicability is Applicability.SAFE
                also = f"; also applies {_fixes(others)}" if others else ""
                title = f"{fix.title} ({item.diagnostic.code}{also})" if safe else \
                    f"Unsafe fix: {fix.title} ({item.diagnostic.code}{also}; review the change)"
                actions.append(types.CodeAction(
                    title=title, kind=QUICK_FIX, diagnostics=[diagnostic], is_preferred=safe,
                    edit=workspace_edit(change, versions, encoding)))
        if (item.line, item.diagnostic.code) in silenced:
            continue
        silenced.add((item.line, item.diagnostic.code))
        change = documents.noqa_change(snapshot, program, item)
        if change:
            actions.append(types.CodeAction(
                title=f"Add `# noqa: {item.diagnostic.code}` to this line", kind=QUICK_FIX,
                diagnostics=[diagnostic], edit=workspace_edit(change, versions, encoding)))
    return actions


def _fixes(others) -> str:
    codes = ", ".join(sorted({d.code for d in others}))
    return f"the {codes} fix" if len(others) == 1 else f"{len(others)} other fixes ({codes})"
