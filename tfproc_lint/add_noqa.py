"""`--add-noqa`: silence every current finding with `# noqa: CODE` at the end of its line.

For adopting tfproc-lint on an existing code base: the findings of today are marked, new code is
checked. Running it again changes nothing; a file without findings is never touched. Files are
written like fixes are (atomically, keeping encoding, BOM, newline style and permissions); in a
notebook the comment goes on the line of the finding's cell. The comments themselves are noqa.py's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tfproc_lint.config import Config
from tfproc_lint.engine import lint_program, lint_source
from tfproc_lint.files import SourceFile, is_notebook
from tfproc_lint.fixing import apply_edits, write_atomically
from tfproc_lint.noqa import noqa_edits
from tfproc_lint.notebook import read_notebook, write_notebook
from tfproc_lint.source import SourceError, read_source


@dataclass
class NoqaOutcome:
    path: str
    changed: int = 0  # lines that gained a comment or a code
    skipped: list[str] = field(default_factory=list)  # where no comment could go: `path:line`, `path:cell N:line`
    error: str | None = None


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
    decoded = read_source(source_file.path)
    diagnostics = lint_source(decoded.text, source_file.display, config)
    edits, skipped = noqa_edits(decoded.text, diagnostics)
    outcome.skipped = [f"{source_file.display}:{line}" for line in skipped]
    if edits:
        data = apply_edits(decoded.text, edits).encode(decoded.encoding)
        write_atomically(source_file.path, (b"\xef\xbb\xbf" if decoded.bom else b"") + data)
        outcome.changed = len(edits)


def _notebook(source_file: SourceFile, config: Config, outcome: NoqaOutcome) -> None:
    notebook = read_notebook(source_file.path.read_bytes())
    if notebook.program is None:
        return
    program = notebook.program
    edits, skipped = noqa_edits(program.text, lint_program(program, source_file.display, config))
    outcome.skipped = ["{}:cell {}:{}".format(source_file.display, *program.locate(line)) for line in skipped]
    if edits:
        write_atomically(source_file.path, write_notebook(notebook, program.with_edits(edits).sources()))
        outcome.changed = len(edits)
