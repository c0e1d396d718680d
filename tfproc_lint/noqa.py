"""`--add-noqa`: silence every current finding with `# noqa: CODE` at the end of its line.

For adopting tfproc-lint on an existing code base: the findings of today are marked, new code is
checked. A line that already has `# noqa: X` keeps its codes and gains the missing ones; running
it again changes nothing; a file without findings is never touched. Files are written like fixes
are (atomically, keeping encoding, BOM, newline style and permissions); in a notebook the
comment goes on the line of the finding's cell. A line where a comment cannot go (it ends inside a
multi-line string, or with a backslash continuation) is left alone and reported.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field

from tfproc_lint.config import Config
from tfproc_lint.diagnostics import Diagnostic, Edit
from tfproc_lint.files import SourceFile, is_notebook
from tfproc_lint.source import SourceError, split_lines

NOQA = re.compile(r"#\s*noqa(?::\s?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)


@dataclass
class NoqaOutcome:
    path: str
    changed: int = 0  # lines that gained a comment or a code
    skipped: list[str] = field(default_factory=list)  # where no comment could go: `path:line`, `path:cell N:line`
    error: str | None = None


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
    if match is None:
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


def add_noqa(source_file: SourceFile, config: Config) -> NoqaOutcome:
    """Mark one file's findings; write it only when a line changed."""
    outcome = NoqaOutcome(source_file.display)
    try:
        if is_notebook(source_file.path):
            _notebook(source_file, config, outcome)
        else:
            _python(source_file, config, outcome)
    except SourceError as error:
        outcome.error = str(error)
    except OSError as error:
        outcome.error = f"cannot write: {error.strerror or error}"
    return outcome


def _python(source_file: SourceFile, config: Config, outcome: NoqaOutcome) -> None:
    from tfproc_lint.engine import lint_source, read_source
    from tfproc_lint.fixing import apply_edits, write_atomically

    decoded = read_source(source_file.path)
    diagnostics = lint_source(decoded.text, source_file.display, config)
    edits, skipped = noqa_edits(decoded.text, diagnostics)
    outcome.skipped = [f"{source_file.display}:{line}" for line in skipped]
    if edits:
        data = apply_edits(decoded.text, edits).encode(decoded.encoding)
        write_atomically(source_file.path, (b"\xef\xbb\xbf" if decoded.bom else b"") + data)
        outcome.changed = len(edits)


def _notebook(source_file: SourceFile, config: Config, outcome: NoqaOutcome) -> None:
    from tfproc_lint.engine import lint_program
    from tfproc_lint.fixing import write_atomically
    from tfproc_lint.notebook import read_notebook, write_notebook

    notebook = read_notebook(source_file.path.read_bytes())
    if notebook.program is None:
        return
    program = notebook.program
    edits, skipped = noqa_edits(program.text, lint_program(program, source_file.display, config))
    outcome.skipped = ["{}:cell {}:{}".format(source_file.display, *program.locate(line)) for line in skipped]
    if edits:
        write_atomically(source_file.path, write_notebook(notebook, program.with_edits(edits).sources()))
        outcome.changed = len(edits)
