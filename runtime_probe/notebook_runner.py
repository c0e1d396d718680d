"""`python -m runtime_probe.notebook_runner NOTEBOOK`: run a notebook's cells in a real Jupyter kernel.

The probe runs this script like a scenario script (process.execute: time limit, idle detection,
process-tree kill), so what a cell prints reaches this process's stdout and stderr, where the
runner's classifier reads the result line and the tracebacks. Pool workers started by the kernel
write to the kernel's stderr, which is this process's. A cell that raises is reported as a
traceback of the cell's exception and the script exits 1. Cells get no time limit of their own:
the probe's limit (or idle detection) ends a hung cell and kills the whole tree. On every exit the
kernel is shut down and its process group (it runs in a session of its own, with its workers)
is killed, so nothing outlives the notebook.
"""

from __future__ import annotations

import os
import signal
import sys

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError


def print_outputs(cell) -> None:
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream":
            stream = sys.stdout if output.get("name") == "stdout" else sys.stderr
            stream.write(output.get("text", ""))
            stream.flush()


def failure(cell_number: int, error: CellExecutionError) -> str:
    """A traceback in Python's own layout, so the probe's traceback parser reads the cell's error."""
    return (f"Traceback (most recent call last):\n  File \"<cell {cell_number}>\", line 1, in <module>\n"
            f"{error.ename}: {str(error.evalue).splitlines()[0] if error.evalue else ''}\n")


def kernel_pid(client: NotebookClient) -> int | None:
    provisioner = getattr(getattr(client, "km", None), "provisioner", None)
    return getattr(getattr(provisioner, "process", None), "pid", None)


def kill_kernel_group(client: NotebookClient, pid: int | None) -> None:
    manager = getattr(client, "km", None)
    try:
        if manager is not None and manager.has_kernel:
            manager.shutdown_kernel(now=True)
    except Exception:  # noqa: BLE001 - the group kill below is what matters
        pass
    if pid:
        try:
            os.killpg(pid, signal.SIGKILL)  # the kernel leads its own session: workers included
        except OSError:
            pass


GUARD_CELL = "%load_ext tfproc_lint.guard"


def run(path: str, guard: bool = False) -> int:
    """Run the notebook's code cells in order; `guard`: load tfproc-lint's runtime guard in the kernel
    first (a cell of its own, not counted in the cell numbers)."""
    notebook = nbformat.read(path, as_version=4)
    if guard:
        notebook.cells.insert(0, nbformat.v4.new_code_cell(GUARD_CELL))
    client = NotebookClient(notebook, timeout=None, kernel_name="python3", allow_errors=False,
                            resources={"metadata": {"path": os.getcwd()}})
    code, pid = 0, None
    try:
        with client.setup_kernel():
            pid = kernel_pid(client)
            for index, cell in enumerate(notebook.cells):
                number = index if guard else index + 1
                if cell.cell_type != "code":
                    continue
                try:
                    client.execute_cell(cell, index)
                except CellExecutionError as error:
                    print_outputs(cell)
                    sys.stderr.write(failure(number, error))
                    code = 1
                    break
                print_outputs(cell)
    finally:
        kill_kernel_group(client, pid or kernel_pid(client))
    return code


if __name__ == "__main__":
    arguments = sys.argv[1:]
    sys.exit(run(arguments[-1], guard="--guard" in arguments[:-1]))
