"""`# noqa` comments: which findings they silence (as flake8 decides), and the edits that add a
finding's code to the comment on its line (`--add-noqa`, add_noqa.py; the language server's
"silence" action).

A line that already has `# noqa: X` keeps its codes and gains the missing ones; a bare `# noqa`
already silences everything. A line where a comment cannot go (it ends inside a multi-line string,
or with a backslash continuation) is left alone and reported.
"""

from __future__ import annotations

import io
import re
import tokenize

from tfproc_lint.diagnostics import Diagnostic, Edit
from tfproc_lint.source import split_lines

# flake8's NOQA_INLINE_REGEXP (flake8/defaults.py): "# noqa" in any case, then an optional
# ":" and a list of codes; tests/test_noqa.py checks that the decisions are flake8's.
_SILENCING = re.compile(r"# noqa(?::[\s]?(?P<codes>([A-Z]+[0-9]+(?:[,\s]+)?)+))?", re.IGNORECASE)
# An existing comment that `--add-noqa` extends (spaces after "#" allowed).
NOQA = re.compile(r"#\s*noqa(?::\s?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)


def remove_noqa(diagnostics: list[Diagnostic], source: str) -> list[Diagnostic]:
    """Drop findings silenced by `# noqa` on their line, as flake8 does: a bare `# noqa` silences
    every finding; `# noqa: CODE[,CODE ...]` those whose code starts with one of the codes as
    written (`TFP1` covers TFP101; other tools' codes may be mixed in)."""
    if "noqa" not in source.lower() or not diagnostics:
        return diagnostics
    lines = source.splitlines()
    kept = []
    for diagnostic in diagnostics:
        line = lines[diagnostic.line - 1] if diagnostic.line <= len(lines) else ""
        match = _SILENCING.search(line)
        if match is None:
            kept.append(diagnostic)
            continue
        codes = match.group("codes")
        if codes and not diagnostic.code.startswith(tuple(c for c in re.split(r"[,\s]+", codes) if c)):
            kept.append(diagnostic)
    return kept


def noqa_edits(text: str, diagnostics: list[Diagnostic]) -> tuple[list[Edit], list[int]]:
    """Edits that put each finding's code in a `# noqa:` comment on its line, and the lines
    where no comment can go."""
    wanted: dict[int, set[str]] = {}
    for diagnostic in diagnostics:
        wanted.setdefault(diagnostic.line, set()).add(diagnostic.code)
    lines = split_lines(text)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    blocked, comments = _line_facts(text)
    edits, skipped = [], []
    for number, codes in sorted(wanted.items()):
        if number > len(lines) or number in blocked:
            skipped.append(number)
            continue
        body = lines[number - 1].rstrip("\r\n")
        new = _with_codes(body, comments.get(number), codes)
        if new is not None:
            edits.append(Edit(starts[number - 1], starts[number - 1] + len(body), new))
    return edits, skipped


def _with_codes(body: str, comment_at: int | None, codes: set[str]) -> str | None:
    """The line with the codes in its noqa comment, or None when it already silences them."""
    comment = body[comment_at:] if comment_at is not None else ""
    match = NOQA.search(comment)
    if match is None or _SILENCING.search(comment) is None:
        # None, or a spelling flake8 does not read (`#noqa`): a comment of its own after it.
        return f"{body.rstrip()}  # noqa: {', '.join(sorted(codes))}"
    if not match["codes"]:
        return None  # a bare `# noqa` already silences every code
    present = {code.upper() for code in re.split(r"[,\s]+", match["codes"]) if code}
    missing = sorted(codes - present)
    if not missing:
        return None
    end = comment_at + match.end("codes")
    return f"{body[:end]}, {', '.join(missing)}{body[end:]}"


def _line_facts(text: str) -> tuple[set[int], dict[int, int]]:
    """Lines that end inside a token (a multi-line string) or with a backslash continuation, and
    the column of each line's comment."""
    blocked: set[int] = set()
    comments: dict[int, int] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                comments[token.start[0]] = token.start[1]
            elif token.end[0] > token.start[0] and token.type not in (tokenize.NEWLINE, tokenize.NL):
                blocked.update(range(token.start[0], token.end[0]))
    except (tokenize.TokenError, SyntaxError):
        return set(range(1, text.count("\n") + 2)), {}
    for number, line in enumerate(split_lines(text), start=1):
        line = line.rstrip("\r\n")
        code = line[: comments[number]] if number in comments else line
        if code.rstrip().endswith("\\"):
            blocked.add(number)
    return blocked, comments
