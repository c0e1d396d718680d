"""The engine's findings and fixes as LSP data (lsprotocol types)."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from tfproc_lint.diagnostics import Diagnostic, Severity
from tfproc_lint.links import rule_url
from tfproc_lint.rules.base import rule_by_code
from tfproc_lint.server.documents import Change, Snapshot, line_edits
from tfproc_lint.server.positions import LineIndex

SOURCE = "tfproc-lint"
SEVERITY = {Severity.ERROR: types.DiagnosticSeverity.Error, Severity.WARNING: types.DiagnosticSeverity.Warning}


def position(index: LineIndex, line: int, column: int) -> types.Position:
    """A 1-based line and 0-based character column as an LSP position."""
    line, character = index.to_client(line - 1, column)
    return types.Position(line=line, character=character)


def finding_range(index: LineIndex, line: int, col: int, end_line: int | None, end_col: int | None) -> types.Range:
    start = position(index, line, col)
    if end_line is None or end_col is None:  # to the end of the line
        end_line, end_character = index.end_of_line(line - 1)
        return types.Range(start=start, end=types.Position(line=end_line, character=end_character))
    return types.Range(start=start, end=position(index, end_line, end_col))


def to_lsp(diagnostic: Diagnostic, uri: str, indexes: dict[str, LineIndex], snapshot: Snapshot) -> types.Diagnostic:
    """`indexes`: each document's LineIndex by URI (a related location may be in another cell)."""
    index = indexes[uri]
    url = rule_url(diagnostic.code)
    related = []
    for item in diagnostic.related:
        other = snapshot.cell_uri(item.cell) if snapshot.notebook else uri
        if item.path is not None:  # another module of the project
            other = Path(item.path).resolve().as_uri()
        other_index = indexes.get(other, index)
        related.append(types.DiagnosticRelatedInformation(
            location=types.Location(uri=other, range=finding_range(
                other_index, item.line, item.col, item.end_line, item.end_col)),
            message=item.message))
    fix = diagnostic.fix
    return types.Diagnostic(
        range=finding_range(index, diagnostic.line, diagnostic.col, diagnostic.end_line, diagnostic.end_col),
        message=diagnostic.full_message,
        severity=SEVERITY[diagnostic.severity],
        code=diagnostic.code,
        code_description=types.CodeDescription(href=url) if url else None,
        source=SOURCE,
        related_information=related or None,
        data={"fix": fix.title, "applicability": fix.applicability.value} if fix else None,
    )


def workspace_edit(change: Change, versions: dict[str, int | None], encoding: str) -> types.WorkspaceEdit:
    """Line-level edits for each changed document, tied to the version they were computed on."""
    document_changes = []
    for uri, (before, after) in change.items():
        index = LineIndex(before, encoding)
        edits = []
        for edit in line_edits(before, after):
            start = types.Position(*index.offset_to_client(edit.start))
            end = types.Position(*index.offset_to_client(edit.end))
            edits.append(types.TextEdit(range=types.Range(start=start, end=end), new_text=edit.content))
        document_changes.append(types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=versions.get(uri)),
            edits=edits))
    return types.WorkspaceEdit(document_changes=document_changes)


def hover_text(diagnostics: list[Diagnostic]) -> str:
    """Markdown: each finding's rule, its summary and the link to its page."""
    parts = []
    for diagnostic in diagnostics:
        rule = rule_by_code(diagnostic.code)
        if rule is None:
            continue
        text = f"**{rule.code}** `{rule.name}` ({rule.severity.value}): {rule.summary}."
        if diagnostic.fix is not None:
            text += f"\n\nFix ({diagnostic.fix.applicability.value}): {diagnostic.fix.title}"
        url = rule_url(rule.code)
        text += f"\n\n[{rule.code} documentation]({url})" if url else f"\n\n`tfproc-lint explain {rule.code}`"
        parts.append(text)
    return "\n\n---\n\n".join(parts)
