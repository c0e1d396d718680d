"""Reading fixture files: `# expect: CODE[, CODE]` per line and `# fixture-config: k=v` headers.

In a notebook fixture the comments go in its code cells, and the expectations are
(cell number, line in the cell, code); `# fixture-config:` goes in the first code cell.
"""

from __future__ import annotations

import re
from pathlib import Path

from tfproc_lint.config import Config, apply_options

EXPECT = re.compile(r"#\s*expect:\s*(?P<codes>TFP\d{3}(?:\s*,\s*TFP\d{3})*)")
CONFIG = re.compile(r"#\s*fixture-config:\s*(?P<options>.+)")


def expected(source: str) -> set[tuple[int, str]]:
    found = set()
    for number, line in enumerate(source.splitlines(), start=1):
        match = EXPECT.search(line)
        if match:
            for code in re.split(r"\s*,\s*", match.group("codes")):
                found.add((number, code))
    return found


def fixture_config(source: str, where: str) -> Config:
    options = {}
    for line in source.splitlines()[:5]:
        match = CONFIG.search(line)
        if match:
            for pair in match.group("options").split(";"):
                key, _, value = pair.partition("=")
                options[key.strip()] = value.strip()
    return apply_options(Config(), options, where) if options else Config()


def lint_fixtures(root: Path) -> list[Path]:
    lint = root / "fixtures" / "lint"
    return sorted([*lint.rglob("*.py"), *lint.rglob("*.ipynb")])


def code_cells(path: Path) -> list[tuple[int, str]]:
    """(cell number among all cells, source) of a notebook's code cells."""
    import nbformat

    notebook = nbformat.read(path, as_version=nbformat.NO_CONVERT)
    return [(number, cell.source) for number, cell in enumerate(notebook.cells, start=1) if cell.cell_type == "code"]


def fixture_source(path: Path) -> str:
    """The text that holds the expectations: the file, or a notebook's first code cell and the rest."""
    if path.suffix == ".ipynb":
        return "\n".join(source for _, source in code_cells(path))
    return path.read_text(encoding="utf-8")


def expected_in(path: Path) -> set[tuple]:
    """(line, code) for a Python file, (cell, line, code) for a notebook."""
    if path.suffix != ".ipynb":
        return expected(path.read_text(encoding="utf-8"))
    return {(number, line, code) for number, source in code_cells(path) for line, code in expected(source)}
