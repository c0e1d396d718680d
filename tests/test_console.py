"""Colour and progress: only on a terminal, never in CI or when piped; NO_COLOR and --color honoured.

Unit tests drive `Console` with fake streams; the end-to-end tests run the real command on a
pseudo-terminal (the `pty` module) and through pipes.
"""

from __future__ import annotations

import io
import os
import pty
import subprocess

import pytest
import processes
from conftest import ROOT, run_env, tool

from tfproc_lint.output.console import Console

ESC = "\x1b["
FILES = [str(p.relative_to(ROOT)) for p in sorted((ROOT / "fixtures" / "lint" / "TFP101").glob("bad_*.py"))[:4]]


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def clean_env(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("CI", raising=False)
    return monkeypatch


# Console ----------------------------------------------------------------------------------------------
def test_colour_only_on_a_terminal(clean_env) -> None:
    console = Console(FakeTerminal())
    colour = console.colour_for(FakeTerminal())
    assert colour is not None and colour("x", "red") == "\x1b[31mx\x1b[0m"
    assert console.colour_for(io.StringIO()) is None


def test_no_color_disables_auto_colour(clean_env) -> None:
    clean_env.setenv("NO_COLOR", "1")
    assert Console(FakeTerminal()).colour_for(FakeTerminal()) is None
    clean_env.setenv("NO_COLOR", "")  # https://no-color.org: set and not empty
    assert Console(FakeTerminal()).colour_for(FakeTerminal()) is not None


def test_color_option_overrides(clean_env) -> None:
    clean_env.setenv("NO_COLOR", "1")
    assert Console(io.StringIO(), "always").colour_for(io.StringIO()) is not None  # explicit flag beats NO_COLOR
    clean_env.delenv("NO_COLOR")
    assert Console(FakeTerminal(), "never").colour_for(FakeTerminal()) is None


def test_closed_or_odd_streams_are_not_terminals(clean_env) -> None:
    closed = FakeTerminal()
    closed.close()
    assert Console(closed).colour_for(object()) is None


def test_progress_on_a_terminal(clean_env) -> None:
    stream = FakeTerminal()
    console = Console(stream)
    tick = console.progress(3, "checking")
    assert tick is not None
    for _ in range(3):
        tick()
    assert stream.getvalue().startswith("\rchecking 1/3") and stream.getvalue().endswith("\rchecking 3/3")
    console.done()
    assert stream.getvalue().endswith("\r\x1b[K")  # the line is cleared for what follows


@pytest.mark.parametrize("case", ["ci", "pipe", "quiet", "one file"])
def test_no_progress(clean_env, case) -> None:
    stream = io.StringIO() if case == "pipe" else FakeTerminal()
    if case == "ci":
        clean_env.setenv("CI", "true")
    console = Console(stream, quiet=case == "quiet")
    assert console.progress(1 if case == "one file" else 10, "checking") is None
    console.done()
    assert stream.getvalue() == ""


# The command on a pseudo-terminal and through pipes ----------------------------------------------------
def run_on_pty(*args: str, **env_changes: str) -> str:
    """stdout and stderr on one pseudo-terminal; what the terminal received."""
    env = run_env()
    env.pop("CI", None)
    env.update(env_changes)
    primary, secondary = pty.openpty()
    try:
        with processes.started([tool("tfproc-lint"), "check", "-j", "1", *args], cwd=ROOT, env=env,
                               stdin=subprocess.DEVNULL, stdout=secondary, stderr=secondary) as process:
            os.close(secondary)
            secondary = None
            received = processes.read_terminal(process, primary, timeout=120)
            process.wait(timeout=60)
    finally:
        os.close(primary)
        if secondary is not None:
            os.close(secondary)
    return received.decode("utf-8", "replace")


def run_piped(*args: str, **env_changes: str) -> subprocess.CompletedProcess:
    env = run_env()
    env.pop("CI", None)
    env.update(env_changes)
    return processes.run([tool("tfproc-lint"), "check", "-j", "1", *args], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=60, check=False)


def test_terminal_gets_colour_and_progress() -> None:
    output = run_on_pty(*FILES)
    assert f"{ESC}31mTFP101{ESC}0m" in output
    assert f"\rchecking {len(FILES)}/{len(FILES)}" in output and "\r\x1b[K" in output


def test_ci_keeps_colour_but_drops_progress() -> None:
    output = run_on_pty(*FILES, CI="true")
    assert ESC + "31m" in output and "checking" not in output


def test_no_color_on_a_terminal() -> None:
    output = run_on_pty(*FILES, NO_COLOR="1")
    assert "TFP101" in output and "\x1b[3" not in output and "\x1b[1m" not in output
    assert f"checking {len(FILES)}/{len(FILES)}" in output  # progress is not colour


def test_color_never_and_quiet_on_a_terminal() -> None:
    output = run_on_pty(*FILES, "--color", "never", "-q")
    assert "TFP101" in output and ESC not in output and "checking" not in output and "Found" not in output


@pytest.mark.parametrize("format_name", ["json", "sarif", "github"])
def test_machine_formats_stay_plain_on_a_terminal(format_name) -> None:
    output = run_on_pty(*FILES, "--format", format_name)
    assert "TFP101" in output and ESC not in output and "checking" not in output


def test_pipes_get_neither() -> None:
    completed = run_piped(*FILES)
    assert completed.returncode == 1 and "TFP101" in completed.stdout
    assert ESC not in completed.stdout + completed.stderr and "checking" not in completed.stderr


def test_color_always_through_a_pipe() -> None:
    completed = run_piped(*FILES, "--color", "always", NO_COLOR="1")
    assert f"{ESC}31mTFP101{ESC}0m" in completed.stdout and "checking" not in completed.stderr
