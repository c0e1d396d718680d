"""Test notebooks from percent-format text: `# %%` starts a code cell, `# %% [markdown]` a markdown one
(text without any marker is one code cell)."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

KERNEL = {
    "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
    "language_info": {"name": "python"},
}


def notebook(text: str, metadata: dict | None = None):
    if "# %%" not in text:
        text = "# %%\n" + text  # one code cell
    cells = []
    for chunk in text.split("# %%")[1:]:
        head, _, body = chunk.partition("\n")
        body = body.strip("\n")
        cells.append(new_markdown_cell(body) if "[markdown]" in head else new_code_cell(body))
    return new_notebook(cells=cells, metadata=KERNEL if metadata is None else metadata)


def with_output(node, number: int, text: str):
    """Give code cell `number` (1-based among all cells) a stream output and an execution count."""
    cell = node.cells[number - 1]
    cell.outputs = [new_output("stream", name="stdout", text=text)]
    cell.execution_count = number
    return node


def write(path: Path, text: str, metadata: dict | None = None) -> Path:
    nbformat.write(notebook(text, metadata), path)
    return path
