"""The README's promises: the two commands, CI running the same test command, and figures that
are verbatim excerpts of reports produced by scripts in this repository."""

from __future__ import annotations

import re

from conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def section(title_start: str) -> str:
    match = re.search(rf"^## {re.escape(title_start)}.*?(?=^## |\Z)", README, re.MULTILINE | re.DOTALL)
    assert match, f"README has no section starting with {title_start!r}"
    return match.group(0)


def table_rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| ---")]


def test_quick_start_is_two_make_targets_and_ci_runs_the_same_test_command() -> None:
    commands = re.findall(r"^make (\w+)", section("Quick start"), re.MULTILINE)
    assert commands == ["demo", "test"]
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for target in commands:
        assert re.search(rf"^{target}:", makefile, re.MULTILINE), target
    assert "make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_probe_figures_come_from_the_committed_probe_report() -> None:
    report = (ROOT / "docs" / "probe" / "report.md").read_text(encoding="utf-8")
    probe = section("Runtime probe")
    rows = table_rows(probe)
    assert len(rows) > 10
    for row in rows:
        assert row in report, f"README row not in docs/probe/report.md: {row}"
    for bullet in (line for line in probe.splitlines() if line.startswith("- ")):
        assert bullet in report, bullet
    assert (ROOT / "docs" / "probe" / "benchmark.png").exists()


def test_speed_figures_come_from_the_benchmark_readme() -> None:
    figures = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8")
    rows = table_rows(section("Speed"))
    assert rows
    for row in rows:
        assert row in figures, f"README row not in benchmarks/README.md: {row}"


def test_every_rule_is_in_the_rule_table() -> None:
    from tfproc_lint.rules.base import all_rules

    table = section("What it catches")
    for rule in all_rules():
        assert f"[{rule.code}](docs/rules/{rule.code}.md) | {rule.name} |" in table


def make_dry_run(target: str, venv, *stamps: str) -> str:
    """What `make TARGET` would run (`make -n`) for a virtualenv at `venv` holding `stamps`."""
    import subprocess

    venv.mkdir(exist_ok=True)
    for stamp in stamps:
        (venv / stamp).touch()
    completed = subprocess.run(["make", "-n", target, f"VENV={venv}"], cwd=ROOT, capture_output=True, text=True,
                               timeout=60, check=True)
    return completed.stdout


def test_make_demo_installs_the_linter_only(tmp_path) -> None:
    commands = make_dry_run("demo", tmp_path / "venv")
    assert "install --quiet -e ." in commands
    assert "probe" not in commands and "[test" not in commands and "tensorflow" not in commands


def test_make_test_installs_the_probe_engines_and_test_extras_also_after_make_demo(tmp_path) -> None:
    for stamps in ((), (".linter-installed",)):
        commands = make_dry_run("test", tmp_path / f"venv{len(stamps)}", *stamps)
        assert "install --quiet -e '.[notebook,probe,test,engines]'" in commands
        assert "pytest" in commands
    after_test = make_dry_run("demo", tmp_path / "venv2", ".linter-installed", ".all-installed")
    assert " install " not in after_test  # `make test` installed everything `make demo` needs


def test_contributing_names_real_make_targets_and_files() -> None:
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"`?make (\w+)", text))
    assert {"test", "lint", "probe"} <= targets
    for target in targets:
        assert re.search(rf"^{target}:", makefile, re.MULTILINE), target
    for path in re.findall(r"\]\(([^)#]+)\)", text):  # Markdown links
        assert (ROOT / path).exists(), path


def test_usage_examples_are_real_output() -> None:
    """The full-format and notebook examples in Usage are what the command prints today."""
    import subprocess

    from conftest import run_env, tool

    usage = section("Usage")
    for args in (["fixtures/lint/mixed/bad_keras_fork_context_partial.py", "--format", "full", "--select", "TFP201",
                  "-q", "--config", "setup.cfg"],
                 ["fixtures/lint/TFP204/bad_spawn_pool_cell_worker.ipynb"]):
        output = subprocess.run([tool("tfproc-lint"), "check", *args], cwd=ROOT, env=run_env(), capture_output=True,
                                text=True, check=False, timeout=120).stdout
        assert output.strip() and output.strip() in usage, output
